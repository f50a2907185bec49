# Script mode: runs PROGRAM (with the environment ENV, a list of NAME=VALUE), checks its exit status against
# EXPECT_STATUS and its combined output against EXPECT_REGEX (and, when given, that it does not match REJECT_REGEX).
# The environment is set here rather than through `cmake -E env`, which would report a program killed by a signal
# as exit status 1: execute_process names the signal ("Segmentation fault").
foreach(assignment IN LISTS ENV)
  if(assignment STREQUAL "")
    continue()
  endif()
  string(REGEX MATCH "^([^=]+)=(.*)$" matched "${assignment}")
  set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
endforeach()
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
if(DEFINED REJECT_REGEX AND "${out}${err}" MATCHES "${REJECT_REGEX}")
  message(FATAL_ERROR "output matches '${REJECT_REGEX}'")
endif()
