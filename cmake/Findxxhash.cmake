# Finds the xxHash library (Debian: libxxhash-dev) and defines the imported target
# xxhash::xxhash. pkg-config first (libxxhash.pc), then a plain search for the header and the
# library, for installs without a .pc file.
#   xxhash_FOUND, xxhash_INCLUDE_DIR, xxhash_LIBRARY, xxhash_VERSION
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(PC_xxhash QUIET libxxhash)
endif()

find_path(xxhash_INCLUDE_DIR NAMES xxhash.h HINTS ${PC_xxhash_INCLUDE_DIRS})
find_library(xxhash_LIBRARY NAMES xxhash HINTS ${PC_xxhash_LIBRARY_DIRS})
if(PC_xxhash_VERSION)
  set(xxhash_VERSION ${PC_xxhash_VERSION})
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(xxhash REQUIRED_VARS xxhash_LIBRARY xxhash_INCLUDE_DIR
                                  VERSION_VAR xxhash_VERSION)

if(xxhash_FOUND AND NOT TARGET xxhash::xxhash)
  add_library(xxhash::xxhash UNKNOWN IMPORTED)
  set_target_properties(xxhash::xxhash PROPERTIES IMPORTED_LOCATION "${xxhash_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${xxhash_INCLUDE_DIR}")
endif()
mark_as_advanced(xxhash_INCLUDE_DIR xxhash_LIBRARY)
