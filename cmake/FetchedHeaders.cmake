# kiln_fetched_include_dir(VAR SCRIPT HEADER [ARGS...]): unless the cache
# variable VAR names a directory already, runs cmake/SCRIPT with ARGS (it
# prints the include directory it fetched into, or found in, Kiln's cache)
# and stores that in VAR; either way VAR/HEADER must exist. Upstream headers
# are never committed (docs/pjrt-header.md, docs/ffi.md).
function(kiln_fetched_include_dir var script header)
  if(NOT ${var})
    find_package(Python3 COMPONENTS Interpreter REQUIRED)
    execute_process(
      COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${script} ${ARGN}
      OUTPUT_VARIABLE fetched
      ERROR_VARIABLE error
      RESULT_VARIABLE result
      OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "Could not fetch ${header}: ${error}\n"
              "Set -D${var}=<dir containing ${header}>.")
    endif()
    set(${var} "${fetched}" CACHE PATH "" FORCE)
  endif()
  if(NOT EXISTS "$CACHE{${var}}/${header}")
    message(FATAL_ERROR "$CACHE{${var}}/${header} does not exist")
  endif()
endfunction()
