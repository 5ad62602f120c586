# libFuzzer targets (fuzz/fuzz_<name>.c -> bin/fuzz_<name>), built only with a
# clang that can link -fsanitize=fuzzer; other compilers skip them (gcc has no
# libFuzzer). Included from the root CMakeLists.txt after the library exists.
#
# The targets link a copy of the library compiled with coverage for libFuzzer
# (-fsanitize=fuzzer-no-link) and with ASan and UBSan whatever MCP_SANITIZE
# says, so that the library the other tests use stays as it is. When tests are
# built, each target also runs for MCP_FUZZ_SECONDS from its seed corpus
# (fuzz/corpus/<name>) as the test fuzz_<name>; new inputs it finds go to
# <build>/fuzz/corpus/<name>, crashes to <build>/fuzz/artifacts/.
#
# scripts/fuzz builds build-fuzz/ and runs the targets for longer.

set(MCP_FUZZ_SECONDS 10 CACHE STRING "Seconds each fuzz target runs in the test command")

# The failmalloc test (tests/integration/test_failmalloc.c, registered by
# McpTests with every compiler) counts and fails the library's allocations: its
# executable reaches them through the linker's --wrap, which applies to the
# static library's objects linked into it.
if(TARGET integration_failmalloc)
    target_link_options(integration_failmalloc PRIVATE
        "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup"
        "LINKER:--wrap=json_loadb,--wrap=json_loads")
endif()
# The same for the cluster store on Redis (tests/integration/test_redis_failmalloc.c).
if(TARGET integration_redis_failmalloc)
    target_link_options(integration_redis_failmalloc PRIVATE
        "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup")
endif()

file(GLOB _fuzz_targets CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/fuzz/fuzz_*.c")
list(FILTER _fuzz_targets EXCLUDE REGEX "/fuzz_server\\.c$")
if(NOT _fuzz_targets)
    return()
endif()
if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(STATUS "libmcp: fuzz targets skipped (${CMAKE_C_COMPILER_ID} has no libFuzzer; "
                   "configure with -DCMAKE_C_COMPILER=clang)")
    return()
endif()

set(MCP_FUZZ_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
include(CheckCSourceCompiles)
# A failed check is cached too; ask again, the runtime may be installed now.
if(NOT MCP_HAVE_LIBFUZZER)
    unset(MCP_HAVE_LIBFUZZER CACHE)
endif()
string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${MCP_FUZZ_FLAGS};-fsanitize=fuzzer")
set(CMAKE_REQUIRED_LINK_OPTIONS ${MCP_FUZZ_FLAGS} -fsanitize=fuzzer)
check_c_source_compiles([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { (void)data; return (int)size & 0; }
]] MCP_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT MCP_HAVE_LIBFUZZER)
    message(STATUS "libmcp: fuzz targets skipped (${CMAKE_C_COMPILER} cannot link "
                   "-fsanitize=fuzzer: install libclang-rt-dev)")
    return()
endif()

# The library again, instrumented for libFuzzer.
add_library(mcp_fuzz_lib STATIC ${MCP_SOURCES} ${MCP_LLHTTP_SOURCES})
target_compile_options(mcp_fuzz_lib PUBLIC ${MCP_FUZZ_FLAGS} -fsanitize=fuzzer-no-link)
target_include_directories(mcp_fuzz_lib
    PUBLIC "${PROJECT_SOURCE_DIR}/include" "${PROJECT_SOURCE_DIR}/src"
    PRIVATE "${MCP_LLHTTP_INCLUDE_DIR}")
# Its dependencies are the library's: hiredis too, since the transport reaches
# store/redis/ (the cluster store) as soon as a target links the transport.
target_link_libraries(mcp_fuzz_lib PUBLIC
    PkgConfig::LIBMCP_JANSSON PkgConfig::LIBMCP_UV PkgConfig::LIBMCP_CURL PkgConfig::LIBMCP_CRYPTO
    PkgConfig::LIBMCP_HIREDIS PkgConfig::LIBMCP_CJOSE Threads::Threads m)

# What several targets share: the fuzz server and the stepped HTTP harness.
# Every target links with --wrap=uv_run (see fuzz/http_harness.h); the wrapper
# passes every other loop's uv_run through.
add_library(mcp_fuzz_common STATIC
    "${PROJECT_SOURCE_DIR}/fuzz/fuzz_server.c" "${PROJECT_SOURCE_DIR}/fuzz/http_harness.c")
target_link_libraries(mcp_fuzz_common PUBLIC mcp_fuzz_lib)
target_link_options(mcp_fuzz_common INTERFACE ${MCP_FUZZ_FLAGS} -fsanitize=fuzzer
                    "LINKER:--wrap=uv_run")

add_custom_target(fuzz)
set(MCP_FUZZ_TARGETS "")
foreach(_src IN LISTS _fuzz_targets)
    get_filename_component(_name "${_src}" NAME_WE)
    add_executable(${_name} "${_src}")
    target_link_libraries(${_name} PRIVATE mcp_fuzz_common)
    add_dependencies(fuzz ${_name})
    list(APPEND MCP_FUZZ_TARGETS ${_name})
endforeach()

if(NOT MCP_BUILD_TESTS)
    return()
endif()
# A short run of each target from its seeds: the seed corpus is read-only, what
# the run finds goes to the build tree. A crash, leak, UB report or an input
# slower than 10 s fails the test.
foreach(_name IN LISTS MCP_FUZZ_TARGETS)
    string(REGEX REPLACE "^fuzz_" "" _short "${_name}")
    set(_corpus "${PROJECT_BINARY_DIR}/fuzz/corpus/${_short}")
    set(_artifacts "${PROJECT_BINARY_DIR}/fuzz/artifacts")
    file(MAKE_DIRECTORY "${_corpus}" "${_artifacts}")
    set(_seeds "${PROJECT_SOURCE_DIR}/fuzz/corpus/${_short}")
    set(_dict "")
    if(EXISTS "${PROJECT_SOURCE_DIR}/fuzz/${_short}.dict")
        set(_dict "-dict=${PROJECT_SOURCE_DIR}/fuzz/${_short}.dict")
    endif()
    add_test(NAME ${_name}
        COMMAND ${_name} -max_total_time=${MCP_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                -print_final_stats=1 -artifact_prefix=${_artifacts}/${_short}- ${_dict}
                "${_corpus}" "${_seeds}")
    math(EXPR _timeout "${MCP_FUZZ_SECONDS} * 3 + 60")
    set_tests_properties(${_name} PROPERTIES TIMEOUT ${_timeout} LABELS fuzz
        ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endforeach()
