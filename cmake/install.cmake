# `cmake --install`: the CLI, splice's static libraries, the public headers (include/splice) and
# a CMake package, so that another project writes
#   find_package(splice REQUIRED)
#   target_link_libraries(app PRIVATE splice::splice)
# (examples/consumer does). splice::splice links every stage library and, whole, every backend
# of this build, as splice_library does in the build tree.
include(CMakePackageConfigHelpers)

set(SPLICE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/splice)
set(SPLICE_INSTALLED_LIBRARIES splice_support splice_tensor splice_ir splice_passes
    splice_frontend splice_compiler splice_backend_api splice_backend_common splice_cpu
    splice_plan splice_runtime)
if(SPLICE_CUDA)
  list(APPEND SPLICE_INSTALLED_LIBRARIES splice_cuda)
endif()

install(TARGETS splice RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${SPLICE_INSTALLED_LIBRARIES} splice_library EXPORT splice-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/splice
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(EXPORT splice-targets NAMESPACE splice:: DESTINATION ${SPLICE_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/splice-config.cmake.in
                              ${PROJECT_BINARY_DIR}/splice-config.cmake
                              INSTALL_DESTINATION ${SPLICE_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/splice-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/splice-config.cmake
              ${PROJECT_BINARY_DIR}/splice-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/Findxxhash.cmake
        DESTINATION ${SPLICE_INSTALL_CMAKEDIR})
