# ldmsim_add_layer(NAME [PUBLIC deps...] [PRIVATE deps...] [SOURCES extra...]): the library of one layer folder,
# ldmsim_NAME (alias ldmsim::NAME): every .cpp below its src/, public headers in its include/, position-independent
# code and the project's warnings. One definition, so the layers cannot drift apart in how they are built.
#
# With LDMSIM_LTO, each layer also gets ldmsim_NAME_lto: the same sources compiled a second time for link-time
# optimisation, linked only into the ldmsim command and the Python module. A simulated request passes through many
# small functions across the layers, which only a whole-program link can inline. The libraries themselves stay
# ordinary objects, so that tests and installed packages link at normal speed (GCC would run LTO at every link that
# sees LTO sections).
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
  set_property(GLOBAL APPEND PROPERTY LDMSIM_LAYERS ${name})
  if(LDMSIM_LTO)
    # At the end of the layer's folder, so that options and definitions added after this call are copied too.
    cmake_language(EVAL CODE "cmake_language(DEFER CALL ldmsim_add_lto_copy [[${name}]])")
  endif()
endfunction()

# ldmsim_NAME_lto: an OBJECT library of ldmsim_NAME's sources, compiled as the layer is (its options, definitions,
# include folders and dependencies; per-file options apply because it is made in the same folder) and for LTO.
# At -O3 throughout: a function inlined across files is optimised at its caller's level, so the arithmetic files'
# -O3 would be lost in -O2 callers (EfficientNet-B0 ran 5% slower than without LTO until this). With
# -ffp-contract=off throughout for the same reason: GCC 12 neither merges that flag at the LTO link nor refuses to
# inline across it, so an uncontracted function inlined into a caller with FMA in its instruction set would be
# contracted there, and the simulated arithmetic would round differently.
function(ldmsim_add_lto_copy name)
  set(layer ldmsim_${name})
  get_target_property(sources ${layer} SOURCES)
  add_library(${layer}_lto OBJECT ${sources})
  foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS COMPILE_FEATURES)
    get_target_property(value ${layer} ${property})
    if(value)
      set_property(TARGET ${layer}_lto PROPERTY ${property} "${value}")
    endif()
  endforeach()
  get_target_property(ordered_after ${layer} MANUALLY_ADDED_DEPENDENCIES)  # generated sources' own targets
  if(ordered_after)
    add_dependencies(${layer}_lto ${ordered_after})
  endif()
  get_target_property(include_folders ${layer} INTERFACE_INCLUDE_DIRECTORIES)
  set_property(TARGET ${layer}_lto PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${include_folders}")
  # Other layers by their LTO copies, so that the tool needs none of the ordinary objects; private ones stay private.
  get_property(layers GLOBAL PROPERTY LDMSIM_LAYERS)
  get_target_property(dependencies ${layer} LINK_LIBRARIES)
  get_target_property(public_dependencies ${layer} INTERFACE_LINK_LIBRARIES)
  foreach(dependency IN LISTS dependencies)
    set(scope PRIVATE)
    if(dependency IN_LIST public_dependencies)
      set(scope PUBLIC)
    endif()
    if(dependency MATCHES "^ldmsim_(.+)$" AND CMAKE_MATCH_1 IN_LIST layers)
      set(dependency ${dependency}_lto)
    endif()
    target_link_libraries(${layer}_lto ${scope} ${dependency})
  endforeach()
  # Built only for a target that links it (the tool, the Python module), not by `all` on its own.
  set_target_properties(${layer}_lto PROPERTIES POSITION_INDEPENDENT_CODE ON INTERPROCEDURAL_OPTIMIZATION ON
                                                EXCLUDE_FROM_ALL ON)
  target_compile_options(${layer}_lto PRIVATE -O3 -ffp-contract=off)
endfunction()

# ldmsim_link_lto_layers(TARGET): link TARGET with every layer's LTO copy, and link it with LTO (its own sources join
# the optimised unit, so they are compiled without contraction too). One such link at a time under Ninja: each runs
# its own parallel jobs.
set_property(GLOBAL APPEND PROPERTY JOB_POOLS ldmsim_lto_link=1)
function(ldmsim_link_lto_layers target)
  get_property(layers GLOBAL PROPERTY LDMSIM_LAYERS)
  foreach(layer IN LISTS layers)
    target_link_libraries(${target} PRIVATE ldmsim_${layer}_lto)
  endforeach()
  target_compile_options(${target} PRIVATE -ffp-contract=off)
  # GCC 12 at -O3 warns of std::string copies of impossible sizes once `const char* + std::string` is inlined
  # (a known false positive of its libstdc++ string code); the whole-program link inlines more of them than one file.
  target_link_options(${target} PRIVATE -Wno-stringop-overflow -Wno-stringop-overread)
  set_target_properties(${target} PROPERTIES INTERPROCEDURAL_OPTIMIZATION ON JOB_POOL_LINK ldmsim_lto_link)
endfunction()
