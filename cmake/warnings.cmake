# Warning flags for ldmsim's own targets (never applied to third-party code).
function(ldmsim_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                                           -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
                                           -Wno-missing-field-initializers)  # designated initializers leave the rest defaulted
  if(LDMSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
