# ldmsim_add_layer(NAME [PUBLIC deps...] [PRIVATE deps...] [SOURCES extra...]): the library of one layer folder,
# ldmsim_NAME (alias ldmsim::NAME): every .cpp below its src/, public headers in its include/, position-independent
# code and the project's warnings. One definition, so the layers cannot drift apart in how they are built.
function(ldmsim_add_layer name)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE;SOURCES" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  add_library(ldmsim_${name} ${sources} ${ARG_SOURCES})
  add_library(ldmsim::${name} ALIAS ldmsim_${name})
  target_include_directories(ldmsim_${name} PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
                                                   $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(ldmsim_${name} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  set_target_properties(ldmsim_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  ldmsim_set_warnings(ldmsim_${name})
endfunction()
