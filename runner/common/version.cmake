# Writes version.cc with the git commit of SOURCE_DIR; run with cmake -P on
# every build (configure_file leaves the file untouched when nothing changed,
# so nothing recompiles then).
#   -DSOURCE_DIR= -DGIT_EXECUTABLE= -DOPVERIFY_VERSION= -DINPUT= -DOUTPUT=
set(OPVERIFY_GIT_COMMIT unknown)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short HEAD
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  RESULT_VARIABLE rev_parse_failed OUTPUT_VARIABLE commit
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rev_parse_failed AND commit)
    set(OPVERIFY_GIT_COMMIT ${commit})
    execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                    WORKING_DIRECTORY ${SOURCE_DIR}
                    RESULT_VARIABLE status_failed OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT status_failed AND changes)
      string(APPEND OPVERIFY_GIT_COMMIT -dirty)
    endif()
  endif()
endif()
configure_file(${INPUT} ${OUTPUT} @ONLY)
