# Third-party packages, all from Debian 12 (see scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS fiber context)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(zstd 1.4 REQUIRED)  # trace blocks (libzstd-dev ships zstdConfig.cmake)
find_package(Protobuf REQUIRED)  # ONNX models (libprotobuf-dev), through libonnx-dev's onnx_proto
find_package(ONNX REQUIRED)
# elfutils' libdw (libdw-dev): athread checking reports give slave code as source file and line
# (athread/src/code_lines.cpp).
find_package(PkgConfig REQUIRED)
pkg_check_modules(LDMSIM_LIBDW REQUIRED IMPORTED_TARGET libdw)
if(LDMSIM_BUILD_TOOLS)
  find_package(CLI11 REQUIRED)
endif()
if(LDMSIM_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
if(LDMSIM_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
# Open MPI (libopenmpi-dev): optional; MPI + athread programs and their tests are built only when it is found
# (here, at the top, so MPI::MPI_C is visible in every folder).
# CXX: C++ host files of MPI programs (mpi.h in C++ brings Open MPI's C++ bindings, as mpiCC links them).
find_package(MPI COMPONENTS C CXX QUIET)
