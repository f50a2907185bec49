# ldmsim_add_athread_program(NAME HOST <files> SLAVE <files>): builds an athread / CRTS program for ldmsim.
# The slave files are compiled by the host compiler, linked into one relocatable object whose defined global
# symbols get the slave_ prefix (as the Sunway slave compiler does, so athread_spawn(f) finds slave_f), and
# linked with the host files, ldmsim::athread and the anchor that registers the __thread_local section.
set(LDMSIM_ATHREAD_RENAME_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/rename_slave_symbols.cmake CACHE INTERNAL "")
if(EXISTS ${CMAKE_CURRENT_LIST_DIR}/tl_anchor.c)  # installed layout: everything next to this file
  set(LDMSIM_ATHREAD_ANCHOR ${CMAKE_CURRENT_LIST_DIR}/tl_anchor.c CACHE INTERNAL "")
else()  # source tree
  set(LDMSIM_ATHREAD_ANCHOR ${CMAKE_CURRENT_LIST_DIR}/../src/tl_anchor.c CACHE INTERNAL "")
endif()

function(ldmsim_add_athread_program name)
  cmake_parse_arguments(ARG "" "" "HOST;SLAVE" ${ARGN})
  if(NOT ARG_HOST OR NOT ARG_SLAVE)
    message(FATAL_ERROR "ldmsim_add_athread_program(${name}): give HOST <files> and SLAVE <files>")
  endif()
  add_library(${name}_slave OBJECT ${ARG_SLAVE})
  target_link_libraries(${name}_slave PRIVATE ldmsim::athread)
  target_compile_options(${name}_slave PRIVATE -fexceptions -fno-common)
  set(combined ${CMAKE_CURRENT_BINARY_DIR}/${name}_slave_renamed.o)
  add_custom_command(
    OUTPUT ${combined}
    COMMAND ${CMAKE_COMMAND} "-DOBJECTS=$<TARGET_OBJECTS:${name}_slave>" -DOUTPUT=${combined}
            -DLD=${CMAKE_LINKER} -DNM=${CMAKE_NM} -DOBJCOPY=${CMAKE_OBJCOPY} -P ${LDMSIM_ATHREAD_RENAME_SCRIPT}
    DEPENDS ${name}_slave $<TARGET_OBJECTS:${name}_slave> ${LDMSIM_ATHREAD_RENAME_SCRIPT}
    COMMENT "Renaming the slave symbols of ${name} (slave_ prefix)"
    COMMAND_EXPAND_LISTS VERBATIM)
  set_source_files_properties(${combined} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_executable(${name} ${ARG_HOST} ${combined} ${LDMSIM_ATHREAD_ANCHOR})
  target_link_libraries(${name} PRIVATE ldmsim::athread)
endfunction()
