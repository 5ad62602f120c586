# The manual pages: doc/man/NAME.SECTION.scd, turned into roff by scdoc (Debian package
# scdoc) in the build's man/ folder, installed under share/man. MCP_MAN: AUTO (the default)
# builds them when scdoc is there, ON requires it, OFF leaves them out.
set(MCP_MAN AUTO CACHE STRING "Build the manual pages with scdoc: AUTO, ON or OFF")
set_property(CACHE MCP_MAN PROPERTY STRINGS AUTO ON OFF)

set(MCP_MAN_PAGES "")
if(NOT MCP_MAN STREQUAL "OFF")
    find_program(MCP_SCDOC scdoc)
    if(NOT MCP_SCDOC AND MCP_MAN STREQUAL "ON")
        message(FATAL_ERROR "MCP_MAN=ON but scdoc is missing: install Debian's scdoc (scripts/deps does)")
    elseif(NOT MCP_SCDOC)
        message(STATUS "scdoc not found: the manual pages are not built")
    else()
        file(GLOB _scd CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/doc/man/*.scd")
        foreach(_src IN LISTS _scd)
            get_filename_component(_page "${_src}" NAME)
            string(REGEX REPLACE "\\.scd$" "" _page "${_page}")
            string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" _section "${_page}")
            set(_out "${PROJECT_BINARY_DIR}/man/${_page}")
            add_custom_command(OUTPUT "${_out}"
                COMMAND "${CMAKE_COMMAND}" -E make_directory "${PROJECT_BINARY_DIR}/man"
                COMMAND sh -c "\"$0\" < \"$1\" > \"$2\"" "${MCP_SCDOC}" "${_src}" "${_out}"
                DEPENDS "${_src}"
                COMMENT "scdoc ${_page}"
                VERBATIM)
            list(APPEND MCP_MAN_PAGES "${_out}")
            install(FILES "${_out}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man${_section}")
        endforeach()
        add_custom_target(man ALL DEPENDS ${MCP_MAN_PAGES})
    endif()
endif()

# Every page renders without a groff or man warning, and each program's page defines the
# options its --help lists (tests/man/check.sh). Registered whenever there are tests, so
# that a build without scdoc fails it instead of leaving it out.
if(MCP_BUILD_TESTS)
    add_test(NAME docs_man COMMAND bash "${PROJECT_SOURCE_DIR}/tests/man/check.sh" "${PROJECT_BINARY_DIR}")
    set_tests_properties(docs_man PROPERTIES TIMEOUT 60 LABELS docs)
endif()

# The reference: HTML from the headers' comments (scripts/reference, Doxygen), built by the
# target `reference` into build/reference; the test docs_reference builds it into the test's
# own folder and fails on any Doxygen warning or an exported function on no page, and
# docs_api (tests/doc/check.py) on an exported function whose comment is missing or does
# not say how it fails.
add_custom_target(reference
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/reference" "${PROJECT_BINARY_DIR}/reference"
    COMMENT "the reference, in ${PROJECT_BINARY_DIR}/reference/html"
    VERBATIM)
if(MCP_BUILD_TESTS)
    add_test(NAME docs_reference
        COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/reference" "${PROJECT_BINARY_DIR}/Testing/reference")
    add_test(NAME docs_api COMMAND python3 "${PROJECT_SOURCE_DIR}/tests/doc/check.py" "${PROJECT_SOURCE_DIR}")
    set_tests_properties(docs_reference docs_api PROPERTIES TIMEOUT 120 LABELS docs)
endif()
