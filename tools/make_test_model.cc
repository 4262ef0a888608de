// tunefleet-make-model: writes one of the generated test models (tuner/test_models.h) as an ONNX file.
// `models/tiny_resnet.onnx` and `models/tiny_mobilenet.onnx` were made with it.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "tuner/test_models.h"

int main(int argc, char** argv) {
  CLI::App app{"Write a small generated ONNX model (ResNet-like or MobileNet-like, 1x3x32x32)",
               "tunefleet-make-model"};
  std::string kind, out;
  app.add_option("kind", kind, "resnet | mobilenet")->required()->check(CLI::IsMember({"resnet", "mobilenet"}));
  app.add_option("-o,--output", out, "Output .onnx file")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0) {
      std::cerr << "tunefleet-make-model: error: " << e.what() << " (see --help)\n";
      return 2;
    }
    return app.exit(e);
  }
  auto model = kind == "resnet" ? tunefleet::MakeResNetLikeModel() : tunefleet::MakeMobileNetLikeModel();
  tunefleet::Status st = tunefleet::WriteOnnxModel(model, out);
  if (!st.ok()) {
    std::cerr << "tunefleet-make-model: error: " << st.message() << "\n";
    return 1;
  }
  return 0;
}
