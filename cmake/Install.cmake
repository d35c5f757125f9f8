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
# (examples/consumer/ is such a project; tests/install/ builds it), and
# P/lib/pkgconfig/onnxslim.pc for builds without CMake:
#
#   c++ app.cpp $(pkg-config --cflags --libs onnxslim)
#
# The documents the headers and --help point to (API.md, ARCHITECTURE.md,
# Report.md, TextFormat.md) go to P/share/doc/onnxslim/.
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

# What a link of the library needs besides it (pkg-config and the CMake
# package). A static libonnxslim needs protobuf's runtime library, named by
# its soname so that a consumer needs the runtime package only
# (libprotobuf's .so symlink comes with -dev); a shared one carries it
# (whatever decided the library's type: BUILD_SHARED_LIBS set, unset, or
# set by a parent).
get_target_property(ONNXSLIM_LIBRARY_TYPE onnxslim TYPE)
set(ONNXSLIM_PC_LIBS "-pthread")
if(ONNXSLIM_LIBRARY_TYPE STREQUAL "STATIC_LIBRARY")
  get_target_property(onnxslim_protobuf_lib protobuf::libprotobuf IMPORTED_LOCATION_RELEASE)
  if(NOT onnxslim_protobuf_lib)
    get_target_property(onnxslim_protobuf_lib protobuf::libprotobuf IMPORTED_LOCATION)
  endif()
  if(NOT onnxslim_protobuf_lib)
    set(onnxslim_protobuf_lib "${Protobuf_LIBRARY}")
  endif()
  get_filename_component(onnxslim_protobuf_real "${onnxslim_protobuf_lib}" REALPATH)
  get_filename_component(onnxslim_protobuf_name "${onnxslim_protobuf_real}" NAME)
  # libprotobuf.so.32.0.12 -> libprotobuf.so.32 (its soname)
  string(REGEX REPLACE "^(lib[^.]+\\.so\\.[0-9]+).*$" "\\1" onnxslim_protobuf_soname "${onnxslim_protobuf_name}")
  get_filename_component(onnxslim_protobuf_dir "${onnxslim_protobuf_real}" DIRECTORY)
  string(APPEND ONNXSLIM_PC_LIBS " -L${onnxslim_protobuf_dir} -l:${onnxslim_protobuf_soname}")
  # The CMake package links the same file (onnxslimConfig.cmake.in).
  set(ONNXSLIM_PROTOBUF_RUNTIME "${onnxslim_protobuf_dir}/${onnxslim_protobuf_soname}")
endif()
set(ONNXSLIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnxslim)
install(EXPORT onnxslimTargets NAMESPACE onnxslim:: DESTINATION ${ONNXSLIM_CMAKE_DIR})
configure_package_config_file(cmake/onnxslimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/onnxslimConfig.cmake
  INSTALL_DESTINATION ${ONNXSLIM_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/onnxslimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onnxslimConfig.cmake ${PROJECT_BINARY_DIR}/onnxslimConfigVersion.cmake
        DESTINATION ${ONNXSLIM_CMAKE_DIR})

configure_file(cmake/onnxslim.pc.in ${PROJECT_BINARY_DIR}/onnxslim.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/onnxslim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES docs/API.md docs/ARCHITECTURE.md docs/Report.md docs/TextFormat.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
