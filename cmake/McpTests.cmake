# Registers every test with CTest. Included from the root CMakeLists.txt when
# MCP_BUILD_TESTS is on, after the library and the programs exist.
#
#   tests/unit/test_<name>.c         -> bin/unit_<name>, test unit_<name>
#   tests/integration/test_<name>.c  -> bin/integration_<name>, test integration_<name>
#   tests/integration/server_<x>.c   -> bin/server_<x> (a helper program, not a test)
#   tests/<kind>/<other>.c           -> shared helpers linked into that kind's executables
#   tests/interop/<name>.test.mjs    -> test interop_<name>, run with node
#   tests/interop/<name>.c           -> bin/interop_<name> (a program those tests run)
#
# Every test has a TIMEOUT: a hung test fails, it never stalls CI.

set(MCP_TEST_TIMEOUT_UNIT 60 CACHE STRING "Seconds a unit test may run")
set(MCP_TEST_TIMEOUT_INTEGRATION 120 CACHE STRING "Seconds an integration test may run")
set(MCP_TEST_TIMEOUT_INTEROP 180 CACHE STRING "Seconds an interop test may run")
# Sanitized code runs several times slower; the limits are there to catch
# hangs, not to measure speed.
if(MCP_SANITIZE)
    set(_mcp_timeout_scale 3)
else()
    set(_mcp_timeout_scale 1)
endif()

set(MCP_BIN_DIR "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
set(_tests_dir "${PROJECT_SOURCE_DIR}/tests")

# ---- C tests (cmocka) ----------------------------------------------------

file(GLOB _unit_c CONFIGURE_DEPENDS "${_tests_dir}/unit/*.c")
file(GLOB _integration_c CONFIGURE_DEPENDS "${_tests_dir}/integration/*.c")
if(_unit_c OR _integration_c)
    pkg_check_modules(LIBMCP_CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()

# mcp_add_c_tests(<kind> <timeout> [ENV <var=value>...] [UNREGISTERED <name>...])
#
# Builds tests/<kind>/test_*.c into one executable each and registers them as
# <kind>_<name>; server_*.c become helper programs; any other .c file is a
# helper linked into all of them. The UNREGISTERED names are built but not
# registered: another file registers them when they can run (the cluster tests,
# McpClusterTests.cmake).
function(mcp_add_c_tests kind timeout)
    cmake_parse_arguments(ARG "" "" "ENV;UNREGISTERED" ${ARGN})
    set(dir "${_tests_dir}/${kind}")
    file(GLOB sources CONFIGURE_DEPENDS "${dir}/*.c")
    set(tests "")
    set(servers "")
    set(helpers "")
    foreach(src IN LISTS sources)
        get_filename_component(base "${src}" NAME_WE)
        if(base MATCHES "^test_(.+)$")
            list(APPEND tests "${src}")
        elseif(base MATCHES "^server_" AND kind STREQUAL "integration")
            list(APPEND servers "${src}")
        else()
            list(APPEND helpers "${src}")
        endif()
    endforeach()

    # What every executable of this kind builds and links with: the static
    # library (internal symbols included), private headers, cmocka, hiredis
    # (the Redis tests drive it directly too), OpenSSL (the HTTPS tests are TLS
    # clients of their own, tls_client.c), and this kind's helpers.
    set(deps mcp_${kind}_deps)
    add_library(${deps} INTERFACE)
    target_include_directories(${deps} INTERFACE "${PROJECT_SOURCE_DIR}/src" "${dir}")
    target_link_libraries(${deps} INTERFACE
        mcp_static PkgConfig::LIBMCP_CMOCKA PkgConfig::LIBMCP_UV PkgConfig::LIBMCP_CURL
        PkgConfig::LIBMCP_HIREDIS PkgConfig::LIBMCP_CJOSE PkgConfig::LIBMCP_CRYPTO
        PkgConfig::LIBMCP_JANSSON Threads::Threads m)
    set(common ${deps})
    if(helpers)
        add_library(mcp_${kind}_helpers STATIC ${helpers})
        target_link_libraries(mcp_${kind}_helpers PUBLIC ${deps})
        set(common mcp_${kind}_helpers)
    endif()

    foreach(src IN LISTS servers)
        get_filename_component(name "${src}" NAME_WE)
        add_executable(${name} "${src}")
        target_link_libraries(${name} PRIVATE ${common})
    endforeach()

    math(EXPR timeout "${timeout} * ${_mcp_timeout_scale}")
    foreach(src IN LISTS tests)
        get_filename_component(base "${src}" NAME_WE)
        string(REGEX REPLACE "^test_" "" name "${base}")
        set(target ${kind}_${name})
        add_executable(${target} "${src}")
        target_link_libraries(${target} PRIVATE ${common})
        if(name IN_LIST ARG_UNREGISTERED)
            continue()
        endif()
        add_test(NAME ${target} COMMAND ${target})
        set_tests_properties(${target} PROPERTIES TIMEOUT ${timeout} LABELS ${kind})
        if(ARG_ENV)
            set_tests_properties(${target} PROPERTIES ENVIRONMENT "${ARG_ENV}")
        endif()
    endforeach()
endfunction()

if(_unit_c)
    mcp_add_c_tests(unit ${MCP_TEST_TIMEOUT_UNIT})
endif()
if(_integration_c)
    # cluster_chaos needs three nodes sharing Redis: McpClusterTests.cmake registers it.
    mcp_add_c_tests(integration ${MCP_TEST_TIMEOUT_INTEGRATION} ENV "MCP_BIN_DIR=${MCP_BIN_DIR}"
        UNREGISTERED cluster_chaos)
    # The load balancer's configuration, shared by every cluster test whatever its language.
    set_property(SOURCE "${_tests_dir}/integration/cluster_host.c" APPEND PROPERTY
        COMPILE_DEFINITIONS "MCP_LB_CONFIG_TEMPLATE=\"${_tests_dir}/cluster/haproxy.cfg\"")
endif()

# ---- Interop tests (node) ------------------------------------------------

# tests/interop/<name>.c: programs the node tests run against other
# implementations' servers (our client, driven by a script). They use the
# public API only, as the programs do, and libuv.
file(GLOB _interop_c CONFIGURE_DEPENDS "${_tests_dir}/interop/*.c")
foreach(_src IN LISTS _interop_c)
    get_filename_component(_name "${_src}" NAME_WE)
    add_executable(interop_${_name} "${_src}")
    target_link_libraries(interop_${_name} PRIVATE mcp_static PkgConfig::LIBMCP_UV)
endforeach()

file(GLOB _interop_tests CONFIGURE_DEPENDS "${_tests_dir}/interop/*.test.mjs")
if(_interop_tests)
    find_program(MCP_NODE_EXECUTABLE node)
    set(_node "${MCP_NODE_EXECUTABLE}")
    if(NOT _node)
        # Still register the tests: a missing node must fail them, not hide them.
        set(_node node)
    endif()

    # node_modules is installed by scripts/deps (npm ci), after configuring
    # perhaps, so it is checked when the tests run. A missing one fails this
    # test, and CTest then refuses to run the tests that need it: both count
    # as failures, never as skips.
    add_test(NAME interop_node_modules
        COMMAND "${CMAKE_COMMAND}" "-DINTEROP_DIR=${_tests_dir}/interop" "-DNODE=${_node}"
                -P "${PROJECT_SOURCE_DIR}/cmake/CheckInteropDeps.cmake")
    set_tests_properties(interop_node_modules PROPERTIES
        FIXTURES_SETUP mcp_interop_deps TIMEOUT 60 LABELS interop)

    math(EXPR _timeout "${MCP_TEST_TIMEOUT_INTEROP} * ${_mcp_timeout_scale}")
    foreach(_src IN LISTS _interop_tests)
        get_filename_component(_file "${_src}" NAME)
        string(REGEX REPLACE "\\.test\\.mjs$" "" _name "${_file}")
        add_test(NAME interop_${_name} COMMAND "${_node}" "${_src}"
                 WORKING_DIRECTORY "${_tests_dir}/interop")
        set_tests_properties(interop_${_name} PROPERTIES
            ENVIRONMENT "MCP_BIN_DIR=${MCP_BIN_DIR}"
            FIXTURES_REQUIRED mcp_interop_deps
            TIMEOUT ${_timeout}
            LABELS interop)
    endforeach()
endif()

# ---- Documentation -------------------------------------------------------

# The README's examples must be the code of examples/echo_server.c,
# examples/protected_server.c and examples/login_client.c, which are built (examples_*,
# not run): so the README never shows code that does not compile.
foreach(_pair IN ITEMS "docs_readme_example:echo_server" "docs_readme_protected_example:protected_server"
        "docs_readme_login_example:login_client")
    string(REPLACE ":" ";" _pair "${_pair}")
    list(GET _pair 0 _test)
    list(GET _pair 1 _example)
    if(EXISTS "${PROJECT_SOURCE_DIR}/README.md" AND EXISTS "${PROJECT_SOURCE_DIR}/examples/${_example}.c")
        add_test(NAME ${_test}
            COMMAND "${CMAKE_COMMAND}" "-DREADME=${PROJECT_SOURCE_DIR}/README.md"
                    "-DEXAMPLE=${PROJECT_SOURCE_DIR}/examples/${_example}.c"
                    -P "${PROJECT_SOURCE_DIR}/cmake/CheckReadmeExample.cmake")
        set_tests_properties(${_test} PROPERTIES TIMEOUT 30 LABELS docs)
    endif()
endforeach()

# Every example runs as a test, in both builds: tests/examples/NAME.sh runs examples/NAME.c
# (built as examples_NAME) as its header comment says and checks what it does; the test
# tree_examples fails when an example has no such script.
file(GLOB _example_srcs CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/examples/*.c")
foreach(_src IN LISTS _example_srcs)
    get_filename_component(_name "${_src}" NAME_WE)
    if(EXISTS "${PROJECT_SOURCE_DIR}/tests/examples/${_name}.sh")
        add_test(NAME example_${_name}
            COMMAND bash "${PROJECT_SOURCE_DIR}/tests/examples/${_name}.sh" "${MCP_BIN_DIR}")
        math(EXPR _t "${MCP_TEST_TIMEOUT_INTEGRATION} * ${_mcp_timeout_scale}")
        set_tests_properties(example_${_name} PROPERTIES TIMEOUT ${_t} LABELS "docs;examples")
        # Those with an authorization server need the interop tests' npm packages.
        file(READ "${PROJECT_SOURCE_DIR}/tests/examples/${_name}.sh" _script)
        if(_script MATCHES "authserver\\.mjs" AND TEST interop_node_modules)
            set_tests_properties(example_${_name} PROPERTIES FIXTURES_REQUIRED mcp_interop_deps)
        endif()
    endif()
endforeach()
# GET /metrics of mcp-everything and mcp-gateway, read by a strict parser of the
# Prometheus text format (tests/metrics/prometheus.sh), in both builds.
add_test(NAME metrics_prometheus
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/metrics/prometheus.sh" "${MCP_BIN_DIR}")
# --log-format of the three programs: every line a JSON object or logfmt pairs
# (tests/logs/formats.sh), in both builds.
add_test(NAME logs_formats
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/logs/formats.sh" "${MCP_BIN_DIR}")
math(EXPR _t "${MCP_TEST_TIMEOUT_INTEGRATION} * ${_mcp_timeout_scale}")
set_tests_properties(metrics_prometheus logs_formats PROPERTIES TIMEOUT ${_t} LABELS integration)
add_test(NAME tree_examples
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/examples/tree.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(tree_examples PROPERTIES TIMEOUT 30 LABELS tree)

# ---- The tree ------------------------------------------------------------

# LICENSE is the MIT licence and every C file of the project starts with its
# SPDX line.
add_test(NAME tree_licence
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/tree/licence.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(tree_licence PROPERTIES TIMEOUT 30 LABELS tree)

# No arrow up and no circle between rooms: every include under src/ and
# include/ names its own room or a lower layer of tests/tree/layers; and the
# check fails on a copy of the tree with such includes planted.
add_test(NAME tree_layers
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/tree/layers.sh" "${PROJECT_SOURCE_DIR}")
add_test(NAME tree_layers_catch
    COMMAND bash "${PROJECT_SOURCE_DIR}/tests/tree/layers_catch.sh" "${PROJECT_SOURCE_DIR}")
set_tests_properties(tree_layers tree_layers_catch PROPERTIES TIMEOUT 60 LABELS tree)

# ---- The ABI -------------------------------------------------------------

# libmcp.so.0 exports exactly the headers' MCP_EXTERN functions, at the version node of
# abi/libmcp.map, and abidiff finds nothing in it incompatible with the ABI recorded in
# abi/libmcp.abi (scripts/abi check); and that check refuses a recorded ABI with a function
# more, or with a parameter of another type (scripts/abi catch). Not in the sanitizer
# build, whose instrumented library is not the one released.
# abi/libmcp.abi was recorded on x86_64: elsewhere types differ in size and the check
# would compare what cannot be compared.
if(NOT MCP_SANITIZE AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
    add_test(NAME abi_check COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/abi" check $<TARGET_FILE:mcp_shared>)
    add_test(NAME abi_check_catch COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/abi" catch)
    set_tests_properties(abi_check abi_check_catch PROPERTIES TIMEOUT 120 LABELS tree)
endif()

# ---- Installing ----------------------------------------------------------

# cmake --install into a temporary prefix, then the README's example built
# against it with pkg-config (shared, --static) and find_package(libmcp), and
# run. Not in the sanitizer build: its libraries need the sanitizer runtimes,
# which a plain program linked against them does not bring.
if(NOT MCP_SANITIZE AND EXISTS "${PROJECT_SOURCE_DIR}/examples/echo_server.c")
    add_test(NAME install_package
        COMMAND bash "${PROJECT_SOURCE_DIR}/tests/install/run.sh" "${PROJECT_BINARY_DIR}"
                "${PROJECT_SOURCE_DIR}")
    set_tests_properties(install_package PROPERTIES TIMEOUT 300 LABELS install)
endif()

# The Debian packages: dpkg-buildpackage -us -uc -b of a copy of the tree, lintian with no
# error or warning, apt able to install them, and the examples built and run against them
# unpacked (tests/install/debian.sh). It builds the library again, in Release: minutes.
if(NOT MCP_SANITIZE AND EXISTS "${PROJECT_SOURCE_DIR}/debian/control")
    add_test(NAME package_debian
        COMMAND bash "${PROJECT_SOURCE_DIR}/tests/install/debian.sh" "${PROJECT_SOURCE_DIR}")
    # It builds with as many jobs as there are CPUs: it counts for them all.
    set_tests_properties(package_debian PROPERTIES TIMEOUT 1200 LABELS install PROCESSORS 2)
endif()
