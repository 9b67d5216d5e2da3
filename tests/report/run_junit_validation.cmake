# Writes the sample reports and an inspect document (the hazardous and the clean
# vLLM default expand of Triton 3.6.0, prebuilt), then reads their JUnit with two
# consumers' parsers (validate_junit.py); fails the test on any error.
file(REMOVE_RECURSE ${OUTDIR})
file(MAKE_DIRECTORY ${OUTDIR})
execute_process(COMMAND ${WRITER} ${OUTDIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "write_sample_reports failed: ${rc}")
endif()
execute_process(COMMAND ${LORAPROBE} inspect --json --triton 3.6.0 --compiler prebuilt
                        --filter op=expand,input_dtype=fp32,block_m=64,block_k=32,num_warps=4,num_slices=1,num_stages=2,add_inputs=true,even_k=true
                OUTPUT_FILE ${OUTDIR}/../inspect-sample.json RESULT_VARIABLE rc)
if(NOT (rc EQUAL 0 OR rc EQUAL 1))
  message(FATAL_ERROR "loraprobe inspect failed: ${rc}")
endif()
execute_process(COMMAND ${PYTHON} ${VALIDATOR} ${LORAPROBE} ${OUTDIR} ${OUTDIR}/../inspect-sample.json RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "JUnit validation failed")
endif()
