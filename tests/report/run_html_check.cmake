# Writes the sample reports, then renders each (and the committed H200 report) with
# `loraprobe report --format html` in a headless browser (check_html.py). Without a
# browser it prints "skipped: no headless browser", which CTest counts as a skip.
file(REMOVE_RECURSE ${OUTDIR})
file(MAKE_DIRECTORY ${OUTDIR}/reports)
execute_process(COMMAND ${WRITER} ${OUTDIR}/reports RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "write_sample_reports failed: ${rc}")
endif()
execute_process(COMMAND ${PYTHON} ${CHECKER} ${LORAPROBE} ${OUTDIR}/pages ${OUTDIR}/reports/clean.json
                        ${OUTDIR}/reports/all-verdicts.json ${OUTDIR}/reports/all-verdicts-full.json ${FIXTURE}
                RESULT_VARIABLE rc)
if(NOT (rc EQUAL 0 OR rc EQUAL 77))
  message(FATAL_ERROR "HTML check failed")
endif()
