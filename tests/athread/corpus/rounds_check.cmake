# Script mode: runs PROGRAM ROUNDS with LDMSIM_TRACE=TRACE and checks that every "(athread_halt)" summary line
# reports the cycles the program saw at the end of that round ("round R ends at C"), that there is one per round
# and that the trace grew with the rounds.
execute_process(COMMAND ${CMAKE_COMMAND} -E env LDMSIM_TRACE=${TRACE} ${PROGRAM} ${ROUNDS}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "exit status ${status}")
endif()
string(REGEX MATCHALL "ldmsim athread: [0-9]+ simulated cycles" halts "${err}")
string(REGEX MATCHALL "round [0-9]+ ends at [0-9]+" ends "${err}")
list(LENGTH halts n_halts)
list(LENGTH ends n_ends)
if(NOT n_halts EQUAL ROUNDS OR NOT n_ends EQUAL ROUNDS)
  message(FATAL_ERROR "${n_halts} summary lines and ${n_ends} round ends for ${ROUNDS} rounds")
endif()
math(EXPR last "${ROUNDS} - 1")
foreach(i RANGE ${last})
  list(GET halts ${i} h)
  list(GET ends ${i} e)
  string(REGEX REPLACE ".*: ([0-9]+) .*" "\\1" hc "${h}")
  string(REGEX REPLACE ".* ([0-9]+)$" "\\1" ec "${e}")
  if(NOT hc EQUAL ec)
    message(FATAL_ERROR "round ${i}: the summary says ${hc} cycles, the program saw ${ec}")
  endif()
endforeach()
# The trace of ROUNDS rounds holds more than that of one (it is rewritten at every halt with everything so far).
execute_process(COMMAND ${CMAKE_COMMAND} -E env LDMSIM_TRACE=${TRACE}.one ${PROGRAM} 1 RESULT_VARIABLE status
                OUTPUT_QUIET ERROR_QUIET)
file(SIZE ${TRACE} size_all)
file(SIZE ${TRACE}.one size_one)
if(NOT size_all GREATER size_one)
  message(FATAL_ERROR "the trace of ${ROUNDS} rounds (${size_all} bytes) is no larger than that of one (${size_one})")
endif()
