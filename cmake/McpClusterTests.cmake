# Registers the tests of several mcp-everything nodes behind a load balancer: HAProxy
# (tests/cluster/haproxy.cfg) sends every request to the next node in turn, with no stickiness,
# so the nodes must share sessions, streams and events through Redis. Included from the root
# CMakeLists.txt after McpConformance, when MCP_BUILD_TESTS is on. Run just these with
# `ctest -L cluster`.
#
# The harness itself is checked by integration_cluster_lb (registered like every integration
# test). The plumbing runs below use one node and no Redis, so they pass with any build: they
# keep the cluster modes of run-server.sh and ts_client_resume.test.mjs working. The real runs,
# three nodes sharing a redis-server, need mcp-everything's --redis: they are registered only
# with -DMCP_TEST_CLUSTER=ON.

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

foreach(_t integration_cluster_lb integration_cluster_sessions integration_cluster_gateway
           integration_cluster_auth integration_client_tasks integration_tasks_hostile)
    if(TEST ${_t})
        set_property(TEST ${_t} APPEND PROPERTY LABELS cluster)
    endif()
endforeach()

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

# ---- Three nodes sharing Redis (-DMCP_TEST_CLUSTER=ON) ----------------------------------------

if(NOT MCP_TEST_CLUSTER)
    return()
endif()

# The official conformance suite through the balancer: 0.1.16's suite all, and the prerelease
# harness's frozen requirements of 2025-11-25 (SSE answers, sessions, resumability) and of
# 2026-07-28 (stateless requests; the tasks extension's scenarios, whose tasks/get, tasks/update
# and tasks/cancel reach another node than the one that made the task: the nodes share their
# tasks in Redis). Every check must pass with no warning, as against one server, and every node
# must exit 0 on SIGTERM.
foreach(_run "all|stable|" "next_sse|next|2025-11-25" "next_2026|next|2026-07-28")
    string(REPLACE "|" ";" _f "${_run}")
    list(GET _f 0 _name)
    list(GET _f 1 _harness)
    list(GET _f 2 _req)
    set(_env "MCP_BIN_DIR=${_cluster_bin}" "MCP_CONFORMANCE_HARNESS=${_harness}"
             "MCP_CONFORMANCE_CLUSTER=3")
    if(_req STREQUAL "")
        list(APPEND _env "MCP_CONFORMANCE_SUITE=all")
    else()
        list(APPEND _env "MCP_CONFORMANCE_REQUIREMENTS=${_req}")
    endif()
    add_test(NAME conformance_cluster_${_name}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${_cluster_tests}/conformance/run-server.sh"
        WORKING_DIRECTORY "${_cluster_tests}/conformance")
    set_tests_properties(conformance_cluster_${_name} PROPERTIES
        ENVIRONMENT "${_env}"
        TIMEOUT 900
        RUN_SERIAL TRUE
        LABELS "conformance;cluster")
endforeach()

# The same suites through three mcp-gateway nodes (each in front of its own mcp-everything --stdio
# children): a session's requests reach the node whose child serves it, relayed by the others;
# 2026-07-28 requests go anywhere, and a retry whose requestState names another node's waiting
# request is relayed there (the nodes, and the children, share one --state-key-file).
foreach(_run "next_sse|2025-11-25|" "next_2026|2026-07-28|expected-2026-gateway-cluster.json")
    string(REPLACE "|" ";" _f "${_run}")
    list(GET _f 0 _name)
    list(GET _f 1 _req)
    list(GET _f 2 _expected)
    set(_env "MCP_BIN_DIR=${_cluster_bin}" "MCP_CONFORMANCE_HARNESS=next"
             "MCP_CONFORMANCE_CLUSTER=3" "MCP_CONFORMANCE_GATEWAY=1"
             "MCP_CONFORMANCE_GATEWAY_FLAGS=--poll-ms 50" "MCP_CONFORMANCE_REQUIREMENTS=${_req}")
    if(NOT _expected STREQUAL "")
        list(APPEND _env "MCP_CONFORMANCE_EXPECTED=${_expected}")
    endif()
    add_test(NAME conformance_cluster_gateway_${_name}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${_cluster_tests}/conformance/run-server.sh"
        WORKING_DIRECTORY "${_cluster_tests}/conformance")
    set_tests_properties(conformance_cluster_gateway_${_name} PROPERTIES
        ENVIRONMENT "${_env}"
        TIMEOUT 900
        RUN_SERIAL TRUE
        LABELS "conformance;cluster")
endforeach()

# The TypeScript SDK client's SEP-1699 polling: each resuming GET lands on another node than the
# stream it resumes, which must replay the events and deliver the result.
add_test(NAME interop_ts_client_resume_cluster
    COMMAND "${_cluster_node}" "${_cluster_tests}/interop/ts_client_resume.test.mjs"
    WORKING_DIRECTORY "${_cluster_tests}/interop")
set_tests_properties(interop_ts_client_resume_cluster PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_cluster_bin};MCP_INTEROP_CLUSTER=3"
    FIXTURES_REQUIRED mcp_interop_deps
    TIMEOUT ${_cluster_interop_timeout}
    LABELS "interop;cluster")

# The leapfrog scenario (GET streams that end each other, for ever) across nodes: the reconnected GET of a finished POST stream stays
# idle on another node, and the notifications triggered on every node reach the standalone GET
# once each.
add_test(NAME integration_resume_leapfrog_cluster COMMAND integration_resume_leapfrog)
set_tests_properties(integration_resume_leapfrog_cluster PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_cluster_bin};MCP_TEST_CLUSTER_NODES=3"
    TIMEOUT ${_cluster_integration_timeout}
    LABELS "integration;cluster")

# Chaos through the balancer (tests/integration/test_cluster_chaos.c), each of its three tests
# on a cluster of its own: 200 calls of 50 notifications cut and resumed on random nodes, each
# event exactly once and in order; a node killed mid-run; Redis stopped and started again
# mid-run. Alone on the machine: its bounds (a killed node's calls get their error within
# 10 s, full service within 15 s of Redis's return) are about the cluster, not about the
# tests running beside it.
add_test(NAME integration_cluster_chaos COMMAND integration_cluster_chaos)
set_tests_properties(integration_cluster_chaos PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_cluster_bin}"
    TIMEOUT 180
    RUN_SERIAL TRUE
    LABELS "integration;cluster")
