# Embeds a text file into the binary: run at build time as
#   cmake -DINPUT=file -DOUTPUT=file.cpp -DNAMESPACE=a::b -DNAME=kText -P embed_text.cmake
# it writes a .cpp defining `extern const char* const NAMESPACE::NAME`, INPUT's bytes and a NUL.
# The bytes go in as hex, so no character of INPUT needs escaping. INPUT is refused when it
# holds a NUL (the C string would end there), a non-ASCII byte (python decodes `-c SCRIPT` with
# the child's locale) or more than 128 KiB (Linux's limit on one argv string, MAX_ARG_STRLEN).
foreach(var INPUT OUTPUT NAMESPACE NAME)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}=... is missing")
  endif()
endforeach()

file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR size "${hex_length} / 2")
if(size GREATER_EQUAL 131072)
  message(FATAL_ERROR "${INPUT}: ${size} bytes; one argv string holds less than 131072 (MAX_ARG_STRLEN)")
endif()

string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(FIND "${bytes}" "0x00," nul)
if(NOT nul EQUAL -1)
  math(EXPR at "${nul} / 5")
  message(FATAL_ERROR "${INPUT}: a NUL byte at offset ${at}")
endif()
string(REGEX MATCH "0x[89a-f]." high "${bytes}")
if(high)
  string(FIND "${bytes}" "${high}" first)
  math(EXPR at "${first} / 5")
  message(FATAL_ERROR "${INPUT}: a non-ASCII byte (${high}) at offset ${at}; keep the file ASCII")
endif()
# 16 bytes a line (CMake's regex has no {n}).
string(REPEAT "0x..," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")

file(RELATIVE_PATH source "${CMAKE_CURRENT_LIST_DIR}/.." "${INPUT}")
file(WRITE "${OUTPUT}.tmp" "// Generated at build time from ${source} by cmake/embed_text.cmake: edit that file, not this one.
namespace ${NAMESPACE} {

namespace {

const char kBytes[${size} + 1] = {
    ${bytes}0x00};

}  // namespace

extern const char* const ${NAME} = kBytes;

}  // namespace ${NAMESPACE}
")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
