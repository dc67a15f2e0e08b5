# Provides the imported target kiln::xla_ffi_header: XLA's FFI headers
# (xla/ffi/api/c_api.h, api.h, ffi.h) of the pinned jaxlib, cached outside
# the tree (never committed; cmake/fetch_ffi_header.py, docs/ffi.md).
set(KILN_JAXLIB_VERSION "0.12.0.1" CACHE STRING
    "jaxlib whose XLA FFI headers Kiln builds against (the Makefile's JAXLIB_VERSION)")
set(KILN_XLA_FFI_INCLUDE_DIR "" CACHE PATH
    "Directory holding xla/ffi/api/c_api.h; fetched into a cache when empty")
include(${CMAKE_CURRENT_LIST_DIR}/FetchedHeaders.cmake)
kiln_fetched_include_dir(KILN_XLA_FFI_INCLUDE_DIR fetch_ffi_header.py xla/ffi/api/c_api.h
                         --jaxlib-version ${KILN_JAXLIB_VERSION})
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
