# Third-party packages, all from Debian 12 (see scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED COMPONENTS fiber context)
# Executables take Boost.Fiber and Boost.Context from their static archives where libboost-fiber-dev ships them:
# every fiber switch asks boost::fibers::context::active() for a thread_local, and from a shared library each of
# those asks __tls_get_addr (docs/benchmarks.md, "Boost.Fiber linked statically"). Shared objects (the Python module)
# keep the shared libraries: Debian's archives are not position-independent.
find_library(LDMSIM_BOOST_FIBER_ARCHIVE libboost_fiber.a)
find_library(LDMSIM_BOOST_CONTEXT_ARCHIVE libboost_context.a)
find_library(LDMSIM_BOOST_FILESYSTEM_ARCHIVE libboost_filesystem.a)  # Boost.Fiber's own dependency
add_library(ldmsim_boost_fiber INTERFACE)
if(LDMSIM_BOOST_FIBER_ARCHIVE AND LDMSIM_BOOST_CONTEXT_ARCHIVE AND LDMSIM_BOOST_FILESYSTEM_ARCHIVE)
  set(ldmsim_is_executable "$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>")
  target_link_libraries(
    ldmsim_boost_fiber
    INTERFACE "$<${ldmsim_is_executable}:${LDMSIM_BOOST_FIBER_ARCHIVE}>"
              "$<${ldmsim_is_executable}:${LDMSIM_BOOST_CONTEXT_ARCHIVE}>"
              "$<${ldmsim_is_executable}:${LDMSIM_BOOST_FILESYSTEM_ARCHIVE}>"
              "$<$<NOT:${ldmsim_is_executable}>:Boost::fiber>"
              "$<$<NOT:${ldmsim_is_executable}>:Boost::context>"
              Threads::Threads)
  target_include_directories(ldmsim_boost_fiber SYSTEM INTERFACE ${Boost_INCLUDE_DIRS})
else()
  target_link_libraries(ldmsim_boost_fiber INTERFACE Boost::fiber Boost::context)
endif()
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
