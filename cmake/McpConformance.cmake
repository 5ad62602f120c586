# Registers the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/interop/package-lock.json with the Node 22 it needs) as CTest tests. Included from the
# root CMakeLists.txt right after McpTests, when MCP_BUILD_TESTS is on.
#
#   conformance_server_active: tests/conformance/run-server.sh starts
#   bin/mcp-everything --http 127.0.0.1:0 and runs the "active" server suite against it. Any
#   failed check, any warning, or a server that does not exit 0 on SIGTERM fails the test.
#
# Run just these with `ctest -L conformance`. A missing node_modules fails the test (the script
# says how to install it); it is never skipped.

if(NOT MCP_BUILD_TESTS)
    return()
endif()

# Where the programs land (McpOptions sets it; the fallback only matters if that ever changes).
if(CMAKE_RUNTIME_OUTPUT_DIRECTORY)
    set(_mcp_conformance_bin "${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
else()
    set(_mcp_conformance_bin "${PROJECT_BINARY_DIR}/bin")
endif()

find_program(MCP_BASH_EXECUTABLE bash)
if(NOT MCP_BASH_EXECUTABLE)
    # Still register the test: a missing bash must fail it, not hide it.
    set(MCP_BASH_EXECUTABLE bash)
endif()

add_test(NAME conformance_server_active
    COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-server.sh"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
# The suite itself is bounded at 600 s inside the script; the rest is start-up and shutdown.
# The suite's many sessions (one per scenario, never deleted) make it a poor neighbour for
# timing-sensitive tests, hence RUN_SERIAL.
set_tests_properties(conformance_server_active PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_mcp_conformance_bin};MCP_CONFORMANCE_SUITE=active"
    TIMEOUT 900
    RUN_SERIAL TRUE
    LABELS conformance)

# Every server scenario, the pending ones too (server-sse-polling and
# server-sse-multiple-streams exercise resumability and SEP-1699 polling).
add_test(NAME conformance_server_all
    COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-server.sh"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
set_tests_properties(conformance_server_all PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_mcp_conformance_bin};MCP_CONFORMANCE_SUITE=all"
    TIMEOUT 900
    RUN_SERIAL TRUE
    LABELS conformance)

# The prerelease harness (0.2.0-alpha.12, npm alias conformance-next) scores the frozen
# requirement set of spec 2025-11-25 (--requirements 2025-11-25); every scenario it runs is
# checked, the unscored ones (pending, added after the release) too. One test per server mode:
#   conformance_next_sse            the default mode (SSE answers, sessions, resumability)
#   conformance_next_json_response  --json-response: everything passes, no warning
#   conformance_next_stateless      --stateless: everything passes but what needs a request to
#                                   the client, which must fail at once and say why, and the
#                                   warnings a server without sessions cannot avoid; both listed
#                                   by name in tests/conformance/expected-stateless.json
foreach(_mode sse json_response stateless)
    set(_env "MCP_BIN_DIR=${_mcp_conformance_bin}" "MCP_CONFORMANCE_HARNESS=next"
             "MCP_CONFORMANCE_REQUIREMENTS=2025-11-25")
    if(_mode STREQUAL "json_response")
        list(APPEND _env "MCP_CONFORMANCE_SERVER_FLAGS=--json-response")
    elseif(_mode STREQUAL "stateless")
        list(APPEND _env "MCP_CONFORMANCE_SERVER_FLAGS=--stateless"
             "MCP_CONFORMANCE_EXPECTED=expected-stateless.json")
    endif()
    add_test(NAME conformance_next_${_mode}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-server.sh"
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
    # Each scenario is bounded by the harness (30 s) and the run by the script (600 s); a
    # passing run takes seconds.
    set_tests_properties(conformance_next_${_mode} PROPERTIES
        ENVIRONMENT "${_env}"
        TIMEOUT 900
        RUN_SERIAL TRUE
        LABELS conformance)
endforeach()

# The same harness's requirement set of revision 2026-07-28 (stateless requests with _meta,
# Multi Round-Trip Requests, subscriptions/listen, request headers, caching hints), against
# the same dual-era server: every scenario passes with no warning, the unscored ones of the
# io.modelcontextprotocol/tasks extension included (mcp-everything offers it).
add_test(NAME conformance_next_2026
    COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-server.sh"
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
set_tests_properties(conformance_next_2026 PROPERTIES
    ENVIRONMENT "MCP_BIN_DIR=${_mcp_conformance_bin};MCP_CONFORMANCE_HARNESS=next;MCP_CONFORMANCE_REQUIREMENTS=2026-07-28"
    TIMEOUT 900
    RUN_SERIAL TRUE
    LABELS conformance)

# The client mode: tests/conformance/run-client.sh runs the scenarios initialize, tools_call,
# sse-retry, elicitation-sep1034-client-defaults and the two of revision 2025-03-26's
# authorization (in no requirement set) against bin/mcp-conformance-client, with each harness;
# every check a scenario is known to make must be reported, and be a SUCCESS.
foreach(_harness stable next)
    add_test(NAME conformance_client_${_harness}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-client.sh"
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
    # Four scenarios of a few seconds each; sse-retry's timing check (450-700 ms) wants a quiet
    # machine, hence RUN_SERIAL.
    set_tests_properties(conformance_client_${_harness} PROPERTIES
        ENVIRONMENT "MCP_BIN_DIR=${_mcp_conformance_bin};MCP_CONFORMANCE_HARNESS=${_harness}"
        TIMEOUT 600
        RUN_SERIAL TRUE
        LABELS conformance)
endforeach()

# The client scenarios of the prerelease harness's requirement sets, both revisions
# (--requirements 2026-07-28 and 2025-11-25): every client scenario of the set, authorization
# (auth/*, the OAuth client of src/oauth/) and the unscored ones (the authorization
# extensions: client credentials, enterprise-managed, DPoP, workload identity) too, passes
# with no failure and no warning. The modern set needs the client's
# revision 2026-07-28 (server/discover and its -32022 retry, _meta, Multi Round-Trip
# Requests, the Mcp-Method, Mcp-Name and Mcp-Param headers, invalid x-mcp-header tools left
# out); the older one pins it to 2025-11-25.
foreach(_rev 2026-07-28 2025-11-25)
    string(REPLACE "-" "_" _name "${_rev}")
    add_test(NAME conformance_client_req_${_name}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-client.sh"
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
    # The harness runs the set's scenarios in parallel, a few seconds in all; sse-retry's
    # timing check wants a quiet machine, hence RUN_SERIAL.
    set_tests_properties(conformance_client_req_${_name} PROPERTIES
        ENVIRONMENT "MCP_BIN_DIR=${_mcp_conformance_bin};MCP_CONFORMANCE_HARNESS=next;MCP_CONFORMANCE_REQUIREMENTS=${_rev}"
        TIMEOUT 600
        RUN_SERIAL TRUE
        LABELS conformance)
endforeach()

# The same server runs through mcp-gateway (mcp-gateway --http ... -- mcp-everything --stdio):
# the gateway must pass what mcp-everything passes on its own, with no warning, in each mode
# (0.1.16's --suite all, and the prerelease's --requirements 2025-11-25 with SSE answers,
# --json-response, and --stateless with the same expected failures), and with --shared-child;
# and --requirements 2026-07-28, served by the gateway's pool (mcp-everything speaks that
# revision itself, so requests pass through, tasks/get, tasks/update and tasks/cancel too).
# The gateway closes a request's SSE stream after 50 ms (--poll-ms, SEP-1699), as
# mcp-everything's test_reconnection asks its own transport to: the client must resume it.
set(_gw_runs
    "all|stable||"
    "next_sse|next|2025-11-25|"
    "next_json_response|next|2025-11-25|--json-response"
    "next_stateless|next|2025-11-25|--stateless"
    "next_shared|next|2025-11-25|"
    "next_2026|next|2026-07-28|")
foreach(_run IN LISTS _gw_runs)
    string(REPLACE "|" ";" _f "${_run}")
    list(GET _f 0 _name)
    list(GET _f 1 _harness)
    list(GET _f 2 _req)
    list(GET _f 3 _flags)
    set(_env "MCP_BIN_DIR=${_mcp_conformance_bin}" "MCP_CONFORMANCE_GATEWAY=1"
             "MCP_CONFORMANCE_HARNESS=${_harness}")
    if(_req STREQUAL "")
        list(APPEND _env "MCP_CONFORMANCE_SUITE=all")
    else()
        list(APPEND _env "MCP_CONFORMANCE_REQUIREMENTS=${_req}")
    endif()
    if(NOT _flags STREQUAL "")
        list(APPEND _env "MCP_CONFORMANCE_SERVER_FLAGS=${_flags}")
    endif()
    if(_name STREQUAL "next_stateless")
        list(APPEND _env "MCP_CONFORMANCE_EXPECTED=expected-stateless.json")
    elseif(_name STREQUAL "next_shared")
        list(APPEND _env "MCP_CONFORMANCE_GATEWAY_FLAGS=--shared-child --poll-ms 50")
    else()
        list(APPEND _env "MCP_CONFORMANCE_GATEWAY_FLAGS=--poll-ms 50")
    endif()
    add_test(NAME conformance_gateway_${_name}
        COMMAND "${MCP_BASH_EXECUTABLE}" "${PROJECT_SOURCE_DIR}/tests/conformance/run-server.sh"
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}/tests/conformance")
    set_tests_properties(conformance_gateway_${_name} PROPERTIES
        ENVIRONMENT "${_env}"
        TIMEOUT 900
        RUN_SERIAL TRUE
        LABELS conformance)
endforeach()
