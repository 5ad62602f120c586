# Run by the test interop_node_modules (cmake -P): fails, with the fix in the
# message, when the interop tests cannot run. Inputs: INTEROP_DIR, NODE.

set(_fix "run scripts/deps (it runs `npm ci` in tests/interop)")

if(NOT NODE OR NODE STREQUAL "node")
    find_program(_node node)
else()
    set(_node "${NODE}")
endif()
if(NOT _node OR NOT EXISTS "${_node}")
    message(FATAL_ERROR "node is not installed, so the interop tests cannot run: ${_fix}")
endif()

foreach(_pkg IN ITEMS "@modelcontextprotocol/sdk" "@modelcontextprotocol/server-everything")
    if(NOT EXISTS "${INTEROP_DIR}/node_modules/${_pkg}/package.json")
        message(FATAL_ERROR "${INTEROP_DIR}/node_modules lacks ${_pkg}, so the interop tests "
                            "cannot run: ${_fix}")
    endif()
endforeach()

# npm writes node_modules/.package-lock.json on every install; a lockfile
# newer than it means node_modules may hold other versions than the pinned ones.
set(_installed "${INTEROP_DIR}/node_modules/.package-lock.json")
if(NOT EXISTS "${_installed}")
    message(FATAL_ERROR "${INTEROP_DIR}/node_modules was not installed by npm: ${_fix}")
endif()
file(TIMESTAMP "${INTEROP_DIR}/package-lock.json" _lock_time "%s" UTC)
file(TIMESTAMP "${_installed}" _installed_time "%s" UTC)
if(_lock_time GREATER _installed_time)
    message(FATAL_ERROR "tests/interop/package-lock.json is newer than node_modules: ${_fix}")
endif()

execute_process(COMMAND "${_node}" --version OUTPUT_VARIABLE _version
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${_node} --version failed (${_rc})")
endif()
message(STATUS "node ${_version}; ${INTEROP_DIR}/node_modules is installed")
