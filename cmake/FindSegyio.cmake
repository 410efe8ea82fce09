# Finds libsegyio (SEG-Y I/O). Debian 12's libsegyio-dev ships a segyio-config.cmake whose imported
# target has no library location (its per-configuration file is missing), so find_package(segyio
# CONFIG) fails at generate time; this module finds the header and the library directly.
# Defines Segyio_FOUND and the imported target Segyio::segyio.
find_path(SEGYIO_INCLUDE_DIR segyio/segy.h)
find_library(SEGYIO_LIBRARY segyio)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Segyio DEFAULT_MSG SEGYIO_LIBRARY SEGYIO_INCLUDE_DIR)
if(Segyio_FOUND AND NOT TARGET Segyio::segyio)
  add_library(Segyio::segyio UNKNOWN IMPORTED)
  set_target_properties(Segyio::segyio PROPERTIES IMPORTED_LOCATION "${SEGYIO_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${SEGYIO_INCLUDE_DIR}")
endif()
mark_as_advanced(SEGYIO_INCLUDE_DIR SEGYIO_LIBRARY)
