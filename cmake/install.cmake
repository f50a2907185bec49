# Install rules and the package config, so that find_package(ldmsim) works from an installed tree.
include(CMakePackageConfigHelpers)

install(TARGETS ldmsim ldmsim_sim ldmsim_dma ldmsim_runtime ldmsim_kernels
        EXPORT ldmsimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(layer sim dma runtime kernels)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

install(EXPORT ldmsimTargets NAMESPACE ldmsim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ldmsimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ldmsimConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ldmsimConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ldmsimConfig.cmake ${PROJECT_BINARY_DIR}/ldmsimConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ldmsim)
