# Install rules and the CMake package:
#
#   cmake --install build --prefix P
#
# installs P/lib/libonnxslim.a (libonnxslim.so with -DBUILD_SHARED_LIBS=ON),
# P/bin/onnxslim, the public headers under P/include/onnxslim/, and
# P/lib/cmake/onnxslim/onnxslimConfig.cmake (+ version and targets files),
# so that a downstream project does
#
#   find_package(onnxslim REQUIRED)
#   target_link_libraries(app PRIVATE onnxslim::onnxslim)
#
# (examples/consumer/ is such a project; tests/install/ builds it.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The public headers: the API and, for compilers that write passes, the IR
# and pass headers it reaches. They include each other by relative path, so
# they work both from the source tree and from P/include/onnxslim/.
# tests/install/public_headers.sh checks that each compiles alone with only
# P/include and the standard library.
set(ONNXSLIM_PUBLIC_HEADERS
  include/onnxslim/onnxslim.h
  include/onnxslim/passes.h)
set(ONNXSLIM_PUBLIC_IR_HEADERS
  ir/Attribute.h ir/DataType.h ir/IR.h ir/Printer.h ir/Support.h ir/Tensor.h ir/Type.h
  ir/Verifier.h)
set(ONNXSLIM_PUBLIC_TRANSFORMS_HEADERS
  transforms/GreedyPatternRewriteDriver.h transforms/ModelCheck.h transforms/Pass.h
  transforms/PassManager.h transforms/PassRegistry.h transforms/PatternMatch.h transforms/RewriteLog.h)

install(TARGETS onnxslim EXPORT onnxslimTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set_target_properties(onnxslim_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
install(TARGETS onnxslim_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${ONNXSLIM_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onnxslim)
install(FILES ${ONNXSLIM_PUBLIC_IR_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onnxslim/ir)
install(FILES ${ONNXSLIM_PUBLIC_TRANSFORMS_HEADERS}
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/onnxslim/transforms)

set(ONNXSLIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnxslim)
# The package finds Protobuf for a static library only (whatever decided the
# library's type: BUILD_SHARED_LIBS set, unset, or set by a parent).
get_target_property(ONNXSLIM_LIBRARY_TYPE onnxslim TYPE)
install(EXPORT onnxslimTargets NAMESPACE onnxslim:: DESTINATION ${ONNXSLIM_CMAKE_DIR})
configure_package_config_file(cmake/onnxslimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/onnxslimConfig.cmake
  INSTALL_DESTINATION ${ONNXSLIM_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/onnxslimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onnxslimConfig.cmake ${PROJECT_BINARY_DIR}/onnxslimConfigVersion.cmake
        DESTINATION ${ONNXSLIM_CMAKE_DIR})
