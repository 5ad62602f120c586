# Options, language level, warnings and sanitizers for everything in this
# project. Included from the root CMakeLists.txt right after project().

option(MCP_SANITIZE "Build with AddressSanitizer (LeakSanitizer included) and UBSan" OFF)
option(MCP_WERROR "Treat compiler warnings as errors" ON)
option(MCP_BUILD_TESTS "Build the tests and register them with CTest" ON)
option(MCP_TEST_CLUSTER
       "Register the tests of three mcp-everything nodes sharing Redis (--redis) behind HAProxy"
       ON)

if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
    set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING
        "Build type: Debug, Release, RelWithDebInfo or MinSizeRel" FORCE)
    set_property(CACHE CMAKE_BUILD_TYPE PROPERTY STRINGS Debug Release RelWithDebInfo MinSizeRel)
endif()

if(NOT CMAKE_C_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    message(FATAL_ERROR "libmcp is built with gcc or clang, not ${CMAKE_C_COMPILER_ID}")
endif()

# C17 in glibc's default feature set (-std=gnu17). Strict -std=c17 hides the
# POSIX types that <uv.h> needs (pthread_rwlock_t), and defining a feature-test
# macro here instead would clash with the sources that define their own
# (#define _GNU_SOURCE) and break -Werror. A source that needs more than the
# default set still says so with a feature-test macro at its top.
set(CMAKE_C_STANDARD 17)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_C_EXTENSIONS ON)
# compile_commands.json for clangd, clang-tidy and cppcheck.
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

# Every executable (programs, examples, tests, test servers) goes to one
# place, which the tests find through MCP_BIN_DIR.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/lib")
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/lib")

add_compile_options(-Wall -Wextra)
if(MCP_WERROR)
    add_compile_options(-Werror)
endif()

if(MCP_SANITIZE)
    # -fno-sanitize-recover=all makes every UBSan finding fatal, so a test
    # cannot pass with undefined behaviour in it. On Linux ASan includes
    # LeakSanitizer.
    set(MCP_SANITIZE_FLAGS
        -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
    include(CheckCSourceCompiles)
    # A failed check is cached too; ask again, the runtimes may be installed now.
    if(NOT MCP_HAVE_SANITIZERS)
        unset(MCP_HAVE_SANITIZERS CACHE)
    endif()
    set(CMAKE_REQUIRED_FLAGS "${MCP_SANITIZE_FLAGS}")
    string(REPLACE ";" " " CMAKE_REQUIRED_FLAGS "${CMAKE_REQUIRED_FLAGS}")
    set(CMAKE_REQUIRED_LINK_OPTIONS ${MCP_SANITIZE_FLAGS})
    check_c_source_compiles("int main(void) { return 0; }" MCP_HAVE_SANITIZERS)
    unset(CMAKE_REQUIRED_FLAGS)
    unset(CMAKE_REQUIRED_LINK_OPTIONS)
    if(NOT MCP_HAVE_SANITIZERS)
        message(FATAL_ERROR "MCP_SANITIZE=ON but ${CMAKE_C_COMPILER} cannot link with "
                            "${MCP_SANITIZE_FLAGS}: install the sanitizer runtimes "
                            "(libclang-rt-dev for clang; gcc's come with gcc)")
    endif()
    add_compile_options(${MCP_SANITIZE_FLAGS})
    add_link_options(${MCP_SANITIZE_FLAGS})
endif()

message(STATUS "libmcp: ${CMAKE_BUILD_TYPE}, ${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER_VERSION}, "
               "MCP_SANITIZE=${MCP_SANITIZE}, MCP_WERROR=${MCP_WERROR}")
