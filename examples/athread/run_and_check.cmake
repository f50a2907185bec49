# Script mode: runs PROGRAM (with the environment ENV, a list of NAME=VALUE), checks its exit status against
# EXPECT_STATUS and its combined output against EXPECT_REGEX.
set(command ${PROGRAM})
if(ENV)
  set(command ${CMAKE_COMMAND} -E env ${ENV} ${PROGRAM})
endif()
execute_process(COMMAND ${command} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
