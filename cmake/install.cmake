# Install rules and the package config, so that find_package(ldmsim) works from an installed tree.
include(CMakePackageConfigHelpers)

install(TARGETS ldmsim ldmsim_boost_fiber ldmsim_sim ldmsim_dma ldmsim_trace ldmsim_trace_analysis ldmsim_runtime ldmsim_kernels ldmsim_graph ldmsim_frontends ldmsim_session ldmsim_stream ldmsim_athread ldmsim_athread_check
        EXPORT ldmsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(layer sim dma trace trace_analysis runtime kernels graph frontends session stream)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

# athread / CRTS headers (own folder: dma.h, simd.h are generic names) and ldmsim_add_athread_program.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/athread/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/ldmsim/athread)
install(FILES ${PROJECT_SOURCE_DIR}/athread/cmake/ldmsim_athread.cmake ${PROJECT_SOURCE_DIR}/athread/cmake/rename_slave_symbols.cmake
              ${PROJECT_SOURCE_DIR}/athread/cmake/sw64_asm.cmake
              ${PROJECT_SOURCE_DIR}/athread/src/tl_anchor.c DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)

install(EXPORT ldmsimTargets NAMESPACE ldmsim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
# The MPI interposition (built only with Open MPI): its own export set, loaded by the package config when the
# consumer finds MPI too.
if(TARGET ldmsim_athread_mpi)
  install(TARGETS ldmsim_athread_mpi EXPORT ldmsimMpiTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT ldmsimMpiTargets NAMESPACE ldmsim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ldmsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ldmsimConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ldmsimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ldmsimConfig.cmake ${PROJECT_BINARY_DIR}/ldmsimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
