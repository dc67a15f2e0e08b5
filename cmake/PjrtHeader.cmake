# Provides the imported target kiln::pjrt_header: the PJRT C API headers from a
# published TensorFlow wheel, cached outside the tree (never committed).
include(${CMAKE_CURRENT_LIST_DIR}/FetchedHeaders.cmake)
kiln_fetched_include_dir(KILN_PJRT_INCLUDE_DIR fetch_pjrt_header.py xla/pjrt/c/pjrt_c_api.h)
file(STRINGS "${KILN_PJRT_INCLUDE_DIR}/xla/pjrt/c/pjrt_c_api.h" kiln_minor_line
     REGEX "^#define PJRT_API_MINOR [0-9]+")
message(STATUS "PJRT C API header: ${KILN_PJRT_INCLUDE_DIR} (${kiln_minor_line})")
add_library(kiln_pjrt_header INTERFACE)
target_include_directories(kiln_pjrt_header SYSTEM INTERFACE "${KILN_PJRT_INCLUDE_DIR}")
add_library(kiln::pjrt_header ALIAS kiln_pjrt_header)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC rejects the header's `PJRT_X* PJRT_X;` slots in C++ ("changes meaning",
  # which clang accepts). -fpermissive turns that into a warning, which GCC
  # hides in system headers; in Kiln's own code -Werror still makes it an error.
  target_compile_options(kiln_pjrt_header INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fpermissive>)
endif()

# kiln::xla_options: the table of XLA's compile options (the fields of
# xla.DebugOptions) that fetch_pjrt_header.py derives from the same wheel's
# xla.pb.h. It is copied into the build tree so that the frontend, which
# checks compile options, sees the table and not the PJRT headers.
set(kiln_options_table "${KILN_PJRT_INCLUDE_DIR}/kiln/xla_debug_options.inc")
if(NOT EXISTS "${kiln_options_table}")
  message(FATAL_ERROR "${kiln_options_table} does not exist: run "
          "cmake/fetch_pjrt_header.py (it writes the table beside the headers it fetches)")
endif()
configure_file("${kiln_options_table}"
               "${CMAKE_BINARY_DIR}/generated/kiln/xla_debug_options.inc" COPYONLY)
add_library(kiln_xla_options INTERFACE)
target_include_directories(kiln_xla_options INTERFACE "${CMAKE_BINARY_DIR}/generated")
add_library(kiln::xla_options ALIAS kiln_xla_options)
