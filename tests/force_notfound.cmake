# Included after project() (CMAKE_PROJECT_INCLUDE) by tests/setup_packages.py:
# the find_library/find_path calls whose result variable is listed in
# MB_FORCE_NOTFOUND fail as on a machine without that library, so the test can
# check that configure still succeeds. Every other call goes to CMake's own
# command (_find_library, _find_path).
function(find_library var)
  if(var IN_LIST MB_FORCE_NOTFOUND)
    set(${var} "${var}-NOTFOUND" CACHE FILEPATH "forced not found (tests/force_notfound.cmake)" FORCE)
    return()
  endif()
  _find_library(${ARGV})
endfunction()

function(find_path var)
  if(var IN_LIST MB_FORCE_NOTFOUND)
    set(${var} "${var}-NOTFOUND" CACHE PATH "forced not found (tests/force_notfound.cmake)" FORCE)
    return()
  endif()
  _find_path(${ARGV})
endfunction()
