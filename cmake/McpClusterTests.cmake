# Registers the tests of several mcp-everything nodes behind a load balancer: HAProxy
# (tests/cluster/haproxy.cfg) sends every request to the next node in turn, with no stickiness,
# so the nodes must share sessions, streams and events through Redis. Included from the root
# CMakeLists.txt after McpConformance, when MCP_BUILD_TESTS is on. Run just these with
# `ctest -L cluster`.
#
# The harness itself is checked by integration_cluster_lb (registered like every integration
# test). The plumbing runs below use one node and no Redis, so they pass with any build: they
# keep the cluster modes of run-server.sh and ts_client_resume.test.mjs working.

if(NOT MCP_BUILD_TESTS)
    return()
endif()

set(_cluster_bin "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
set(_cluster_tests "${PROJECT_SOURCE_DIR}/tests")
find_program(MCP_BASH_EXECUTABLE bash)
find_program(MCP_NODE_EXECUTABLE node)
set(_cluster_node "${MCP_NODE_EXECUTABLE}")
if(NOT _cluster_node)
    # Still register the tests: a missing node must fail them, not hide them.
    set(_cluster_node node)
endif()
math(EXPR _cluster_interop_timeout "${MCP_TEST_TIMEOUT_INTEROP} * ${_mcp_timeout_scale}")
math(EXPR _cluster_integration_timeout "${MCP_TEST_TIMEOUT_INTEGRATION} * ${_mcp_timeout_scale}")

if(TEST integration_cluster_lb)
    set_property(TEST integration_cluster_lb APPEND PROPERTY LABELS cluster)
endif()

# ---- Plumbing: one node, no Redis ------------------------------------------------------------

add_test(NAME conformance_cluster_plumbing
    COMMAND "${MCP_BASH_EXECUTABLE}" "${_cluster_tests}/conformance/run-server.sh"
    WORKING_DIRECTORY "${_cluster_tests}/conformance")
set_tests_properties(conformance_cluster_plumbing PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_cluster_bin};MCP_CONFORMANCE_SUITE=all;MCP_CONFORMANCE_CLUSTER=1;MCP_CONFORMANCE_CLUSTER_NO_REDIS=1"
    TIMEOUT 900
    RUN_SERIAL TRUE
    LABELS "conformance;cluster")

add_test(NAME interop_ts_client_resume_cluster_plumbing
    COMMAND "${_cluster_node}" "${_cluster_tests}/interop/ts_client_resume.test.mjs"
    WORKING_DIRECTORY "${_cluster_tests}/interop")
set_tests_properties(interop_ts_client_resume_cluster_plumbing PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_cluster_bin};MCP_INTEROP_CLUSTER=1;MCP_INTEROP_CLUSTER_NO_REDIS=1"
    FIXTURES_REQUIRED mcp_interop_deps
    TIMEOUT ${_cluster_interop_timeout}
    LABELS "interop;cluster")
