# Provides the imported target kiln::xla_ffi_header: XLA's FFI headers
# (xla/ffi/api/c_api.h, api.h, ffi.h) of the pinned jaxlib, cached outside
# the tree (never committed; cmake/fetch_ffi_header.py, docs/ffi.md).
set(KILN_JAXLIB_VERSION "0.12.0.1" CACHE STRING
    "jaxlib whose XLA FFI headers Kiln builds against (the Makefile's JAXLIB_VERSION)")
set(KILN_XLA_FFI_INCLUDE_DIR "" CACHE PATH
    "Directory holding xla/ffi/api/c_api.h; fetched into a cache when empty")
if(NOT KILN_XLA_FFI_INCLUDE_DIR)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  execute_process(
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/fetch_ffi_header.py
            --jaxlib-version ${KILN_JAXLIB_VERSION}
    OUTPUT_VARIABLE kiln_fetched_ffi_include
    ERROR_VARIABLE kiln_fetch_ffi_error
    RESULT_VARIABLE kiln_fetch_ffi_result
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT kiln_fetch_ffi_result EQUAL 0)
    message(FATAL_ERROR "Could not fetch XLA's FFI headers: ${kiln_fetch_ffi_error}\n"
            "Set -DKILN_XLA_FFI_INCLUDE_DIR=<dir containing xla/ffi/api/c_api.h>.")
  endif()
  set(KILN_XLA_FFI_INCLUDE_DIR "${kiln_fetched_ffi_include}" CACHE PATH "" FORCE)
endif()
if(NOT EXISTS "${KILN_XLA_FFI_INCLUDE_DIR}/xla/ffi/api/c_api.h")
  message(FATAL_ERROR "${KILN_XLA_FFI_INCLUDE_DIR}/xla/ffi/api/c_api.h does not exist")
endif()
file(STRINGS "${KILN_XLA_FFI_INCLUDE_DIR}/xla/ffi/api/c_api.h" kiln_ffi_minor_line
     REGEX "^#define XLA_FFI_API_MINOR [0-9]+")
message(STATUS "XLA FFI headers: ${KILN_XLA_FFI_INCLUDE_DIR} (${kiln_ffi_minor_line})")
add_library(kiln_xla_ffi_header INTERFACE)
target_include_directories(kiln_xla_ffi_header SYSTEM INTERFACE "${KILN_XLA_FFI_INCLUDE_DIR}")
add_library(kiln::xla_ffi_header ALIAS kiln_xla_ffi_header)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # As for the PJRT header (PjrtHeader.cmake): GCC rejects the table's
  # `XLA_FFI_X* XLA_FFI_X;` members in C++; -fpermissive makes that a
  # warning, silent in a system header.
  target_compile_options(kiln_xla_ffi_header INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fpermissive>)
endif()
