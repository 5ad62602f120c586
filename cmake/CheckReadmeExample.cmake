# Run by the test docs_readme_example (cmake -P): README.md must contain the
# text of the example file verbatim, so that the README's code is the code the
# build compiles. Inputs: README, EXAMPLE.

file(READ "${README}" _readme)
file(READ "${EXAMPLE}" _example)
string(FIND "${_readme}" "${_example}" _at)
if(_at EQUAL -1)
    message(FATAL_ERROR "README.md does not contain ${EXAMPLE} verbatim: copy the file's "
                        "text into the README's C code block (or the other way round)")
endif()
message(STATUS "README.md shows ${EXAMPLE} verbatim")
