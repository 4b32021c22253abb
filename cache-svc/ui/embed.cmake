# Writes OUTPUT, a C file that holds the bytes of INPUT as the array NAME
# (followed by a NUL, not counted) and their count as NAME_len, so that a
# page kept in the source tree as HTML is compiled into the program.
# Run as: cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed.cmake
# (plain CMake: no xxd needed).
if(NOT INPUT OR NOT OUTPUT OR NOT NAME)
    message(FATAL_ERROR "embed.cmake: set INPUT, OUTPUT and NAME")
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR len "${digits} / 2")
# Two hex digits a byte; 16 bytes a line.
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line) # CMake's regex has no {16}
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}"
    "/*  Generated from ${INPUT} by embed.cmake: edit that file, not this one. */\n"
    "#include <stddef.h>\n\n"
    "const unsigned char ${NAME}[] = {\n    ${bytes}0x00};\n"
    "const size_t ${NAME}_len = ${len};\n")
