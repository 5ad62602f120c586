# SPDX-License-Identifier: MIT
# Doxygen's INPUT_FILTER for include/mcp/*.h: the headers document the API in plain C
# comments (prose, as the style asks), which Doxygen reads only as /** ... */ and /**< ... */.
# So, as Doxygen reads a header (the file itself is not changed): its first comment after the
# SPDX line becomes the file's documentation, every other comment that starts a line becomes
# a documentation comment of what follows it, and a comment after code on the same line (a
# member's, an enumerator's) one of what precedes it. Characters Doxygen would take for its
# own commands or HTML in that prose are escaped.
function escape(s) {
    gsub(/\\/, "\\\\\\\\", s)
    gsub(/@/, "\\@", s)
    gsub(/</, "\\<", s)
    gsub(/>/, "\\>", s)
    gsub(/&/, "\\\\\\&", s)
    gsub(/#/, "\\#", s)
    gsub(/%/, "\\%", s)
    return s
}
{
    line = $0
    if (NR == 1 && line ~ /SPDX-License-Identifier/) { print line; next }
    if (incomment) {
        if (index(line, "*/")) {
            incomment = 0
            pre = substr(line, 1, index(line, "*/") - 1)
            print escape(pre) substr(line, index(line, "*/"))
        } else
            print escape(line)
        next
    }
    if (match(line, /^[ \t]*\/\*[^*]/) || line ~ /^[ \t]*\/\*$/) {
        lead = substr(line, 1, index(line, "/*") - 1)
        body = substr(line, index(line, "/*") + 2)
        tag = filedone ? "/**" : "/** \\file"
        filedone = 1
        if (index(body, "*/")) {
            print lead tag escape(substr(body, 1, index(body, "*/") - 1)) substr(body, index(body, "*/"))
        } else {
            incomment = 1
            print lead tag escape(body)
        }
        next
    }
    if (match(line, /[;,{][ \t]*\/\*[^*]/) && !index(substr(line, RSTART), "/**")) {
        code = substr(line, 1, index(line, "/*") - 1)
        body = substr(line, index(line, "/*") + 2)
        if (index(body, "*/"))
            print code "/**<" escape(substr(body, 1, index(body, "*/") - 1)) substr(body, index(body, "*/"))
        else {
            incomment = 1
            print code "/**<" escape(body)
        }
        next
    }
    print line
}
