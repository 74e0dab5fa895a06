# git_revision.cmake: writes OUT, the header that defines MB_GIT_REVISION (the
# short commit of SRC, "-dirty" when tracked files differ from it, "unknown"
# outside a git checkout). Run at every build, not at configure time: a
# revision taken when cmake last configured outlives the commits built after
# it, and every results file records this string. OUT is rewritten only when
# the string changes, so an unchanged tree recompiles nothing.
#   cmake -DSRC=<source dir> -DOUT=<header> -P git_revision.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY "${SRC}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0 OR NOT rev)
  set(rev "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no
                  WORKING_DIRECTORY "${SRC}" OUTPUT_VARIABLE changed ERROR_QUIET)
  if(changed)
    string(APPEND rev "-dirty")
  endif()
endif()
set(text "/* Generated at build time by cmake/git_revision.cmake. */\n#define MB_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
