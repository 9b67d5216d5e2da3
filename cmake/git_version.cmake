# Writes generated/version.hpp with the commit being built: run at every build (not only
# at configure time), so a report's meta.git_sha names the code that wrote it. The file is
# rewritten only when its text changes, so an unchanged commit recompiles nothing.
#   cmake -DSOURCE_DIR=... -DTEMPLATE=... -DOUTPUT=... -DPROJECT_VERSION=... -P git_version.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE LP_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT LP_GIT_SHA)
  set(LP_GIT_SHA unknown)
endif()
configure_file(${TEMPLATE} ${OUTPUT} @ONLY)
