# CMake toolchain for a Debian multiarch cross build to 64-bit ARM Linux (glibc).
# Needs: g++-aarch64-linux-gnu, and the :arm64 -dev packages of the libraries (dpkg --add-architecture arm64);
# see deploy/README.md and deploy/cross-aarch64.sh. Libraries and CMake package configs are looked up in
# /usr/lib/aarch64-linux-gnu; programs run at build time (protoc, grpc_cpp_plugin) are the host's.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# pkg-config (FindOpenSSL, RE2 in gRPC's config) must read the arm64 .pc files, never the host's.
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
# Tools that run during the build come from the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# Run target binaries (try_run, tests) under qemu when asked to.
find_program(TF_QEMU_AARCH64 qemu-aarch64)
if(TF_QEMU_AARCH64)
  # -L /: the multiarch libc6:arm64 (see deploy/cross-aarch64.sh for why not /usr/aarch64-linux-gnu).
  set(CMAKE_CROSSCOMPILING_EMULATOR ${TF_QEMU_AARCH64};-L;/)
endif()
