// tunefleet-make-model: writes one of the generated test models (tuner/test_models.h) as an ONNX file.
// `models/tiny_resnet.onnx` and `models/tiny_mobilenet.onnx` were made with it.
#include <filesystem>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli_checks.h"
#include "common/printable.h"
#include "tuner/test_models.h"

int main(int argc, char** argv) {
  CLI::App app{"Write a small generated ONNX model (ResNet-like or MobileNet-like, 1x3x32x32)",
               "tunefleet-make-model"};
  app.set_version_flag("--version", std::string("tunefleet-make-model ") + TUNEFLEET_VERSION);
  std::string kind, out;
  app.add_option("kind", kind, "resnet | mobilenet")->required()->check(CLI::IsMember({"resnet", "mobilenet"}));
  app.add_option("-o,--output", out, "Output .onnx file")->required()->check(tunefleet::cli::NotEmpty());
  if (auto done = tunefleet::cli::ParseCommandLine(app, argc, argv, "tunefleet-make-model")) return *done;
  // A folder is bad input, said as such (it exited 1 with "cannot write the model", no reason given).
  if (std::error_code ec; std::filesystem::is_directory(out, ec)) {
    std::cerr << "tunefleet-make-model: error: -o " << tunefleet::Printable(out)
              << " is a directory: give the path of the .onnx file to write\n";
    return 2;
  }
  auto model = kind == "resnet" ? tunefleet::MakeResNetLikeModel() : tunefleet::MakeMobileNetLikeModel();
  tunefleet::Status st = tunefleet::WriteOnnxModel(model, out);
  if (!st.ok()) {
    std::cerr << "tunefleet-make-model: error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}
