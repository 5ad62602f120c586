# `format` rewrites every C file of ours with clang-format; `format-check`
# lists what is not formatted and fails if anything is. Both use the root
# .clang-format. Third-party code (llhttp, node_modules) is never touched.

find_program(MCP_CLANG_FORMAT NAMES clang-format clang-format-14 clang-format-15 clang-format-16)
if(NOT MCP_CLANG_FORMAT)
    return()
endif()

set(_format_globs "")
foreach(_dir IN ITEMS include src programs examples tests/unit tests/integration tests/interop fuzz
                     bench)
    list(APPEND _format_globs
         "${PROJECT_SOURCE_DIR}/${_dir}/*.c" "${PROJECT_SOURCE_DIR}/${_dir}/*.h")
endforeach()
file(GLOB_RECURSE MCP_FORMAT_FILES CONFIGURE_DEPENDS ${_format_globs})
# bench/ and tests/interop/ install their npm packages (bench's a Node with its C
# headers) under node_modules.
list(FILTER MCP_FORMAT_FILES EXCLUDE REGEX "/node_modules/")

if(MCP_FORMAT_FILES)
    add_custom_target(format
        COMMAND "${MCP_CLANG_FORMAT}" -i ${MCP_FORMAT_FILES}
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
        COMMENT "clang-format -i on the project's C files"
        VERBATIM)
    add_custom_target(format-check
        COMMAND "${MCP_CLANG_FORMAT}" --dry-run --Werror ${MCP_FORMAT_FILES}
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
        COMMENT "clang-format --dry-run --Werror on the project's C files"
        VERBATIM)
endif()

# The tool decides, not reviews (style.md): the test command fails on a file
# clang-format would change.
if(MCP_BUILD_TESTS AND MCP_FORMAT_FILES)
    add_test(NAME format_check
        COMMAND "${MCP_CLANG_FORMAT}" --dry-run --Werror ${MCP_FORMAT_FILES}
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}")
    set_tests_properties(format_check PROPERTIES LABELS docs TIMEOUT 120)
endif()
