# Finds OpenBLAS's single-threaded build (Debian: libopenblas-serial-dev, installed beside the
# default pthread build under <libdir>/openblas-serial) and defines openblas_serial::openblas.
# splice links it instead of the default BLAS because the pthread build starts its worker
# threads in a load-time constructor: every process that loads it holds threads splice never
# uses (splice has its own pool), and under an address-space limit (ulimit -v 100000) a worker
# retried a 128 MB allocation forever, so even `splice --help` never returned (issue 34).
#
# The library's soname (libopenblas.so.0) is the same as the default build's, which the dynamic
# loader would pick through Debian's alternatives, so targets linking it get its folder as their
# run path (CMake adds it to build-tree binaries; set INSTALL_RPATH_USE_LINK_PATH for installed
# ones). Set openblas_serial_ROOT to search another folder first.
#   openblas_serial_FOUND, openblas_serial_LIBRARY, openblas_serial_INCLUDE_DIR
set(_openblas_serial_libdirs)
set(_openblas_serial_incdirs)
foreach(arch ${CMAKE_LIBRARY_ARCHITECTURE} x86_64-linux-gnu aarch64-linux-gnu)
  list(APPEND _openblas_serial_libdirs /usr/lib/${arch}/openblas-serial)
  list(APPEND _openblas_serial_incdirs /usr/include/${arch}/openblas-serial)
endforeach()
find_library(openblas_serial_LIBRARY NAMES openblas
             HINTS ${openblas_serial_ROOT} ${openblas_serial_ROOT}/lib
             PATHS ${_openblas_serial_libdirs} NO_DEFAULT_PATH)
find_path(openblas_serial_INCLUDE_DIR NAMES cblas.h
          HINTS ${openblas_serial_ROOT} ${openblas_serial_ROOT}/include
          PATHS ${_openblas_serial_incdirs} NO_DEFAULT_PATH)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(openblas_serial
  REQUIRED_VARS openblas_serial_LIBRARY openblas_serial_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "splice links OpenBLAS's single-threaded build: install libopenblas-serial-dev (scripts/setup) or set openblas_serial_ROOT")

if(openblas_serial_FOUND AND NOT TARGET openblas_serial::openblas)
  add_library(openblas_serial::openblas UNKNOWN IMPORTED)
  set_target_properties(openblas_serial::openblas PROPERTIES
    IMPORTED_LOCATION "${openblas_serial_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${openblas_serial_INCLUDE_DIR}")
endif()
mark_as_advanced(openblas_serial_LIBRARY openblas_serial_INCLUDE_DIR)
