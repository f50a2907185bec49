# Script mode: runs PROGRAM (a list: the program and its arguments) on RANKS ranks with MPIEXEC (as root on a small
# host: --allow-run-as-root --oversubscribe), in the environment ENV (a list of NAME=VALUE, inherited by the ranks),
# checks the exit status against EXPECT_STATUS ("nonzero": any but 0) and the combined output against each regular
# expression of EXPECT_REGEXES (a list separated by '|||', since a regex may hold ';').
foreach(assignment IN LISTS ENV)
  string(REGEX MATCH "^([^=]+)=(.*)$" matched "${assignment}")
  set(ENV{${CMAKE_MATCH_1}} "${CMAKE_MATCH_2}")
endforeach()
execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np ${RANKS} ${PROGRAM}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
message("${out}${err}")
if(EXPECT_STATUS STREQUAL "nonzero")
  if(status STREQUAL "0")
    message(FATAL_ERROR "exit status 0, expected a failure")
  endif()
elseif(NOT status STREQUAL "${EXPECT_STATUS}")
  message(FATAL_ERROR "exit status ${status}, expected ${EXPECT_STATUS}")
endif()
string(REPLACE "|||" ";" regexes "${EXPECT_REGEXES}")
foreach(regex IN LISTS regexes)
  if(NOT "${out}${err}" MATCHES "${regex}")
    message(FATAL_ERROR "output does not match '${regex}'")
  endif()
endforeach()
