# The arrows of docs/design.md ("Layout"), checked on the sources' #include lines.
# Each folder may include only what it may use; a line that breaks a rule fails the
# configure step, naming the file, the line and the rule.
#
# Used two ways: include()d by the top-level CMakeLists.txt (DSE_ARROWS_ROOT defaults to the
# source tree), and as a script, `cmake -DDSE_ARROWS_ROOT=DIR -P cmake/check_includes.cmake`,
# which the ctest `arrows_planted_include` runs on a copy of the tree with one wrong include
# planted, to show that the check fails on it.
if(NOT DEFINED DSE_ARROWS_ROOT)
  set(DSE_ARROWS_ROOT "${CMAKE_CURRENT_LIST_DIR}/..")
endif()

# _dse_arrow(FOLDER RECURSE|FLAT WHY REGEX...): no file of FOLDER may include a header
# matching any REGEX (matched against the whole #include line).
function(_dse_arrow folder mode why)
  if(mode STREQUAL "RECURSE")
    file(GLOB_RECURSE files "${DSE_ARROWS_ROOT}/${folder}/*.cpp" "${DSE_ARROWS_ROOT}/${folder}/*.hpp")
  else()
    file(GLOB files "${DSE_ARROWS_ROOT}/${folder}/*.cpp" "${DSE_ARROWS_ROOT}/${folder}/*.hpp")
  endif()
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      foreach(re IN LISTS ARGN)
        if(line MATCHES "${re}")
          file(RELATIVE_PATH rel "${DSE_ARROWS_ROOT}" "${f}")
          message(FATAL_ERROR "${rel}: '${line}' breaks an arrow of docs/design.md: ${why}")
        endif()
      endforeach()
    endforeach()
  endforeach()
endfunction()

set(_mpi "[<\"]mpi\\.h[>\"]")
set(_hdf5 "[<\"](hdf5|H5[A-Za-z]*)\\.h[>\"]")
set(_yaml "[<\"]yaml-cpp/")
set(_boost "[<\"]boost/")
set(_dse "\"dse/")
set(_upper "\"dse/(io|h5|driver|validate|cli)/")

_dse_arrow(costmodel RECURSE "the cost model is pure: the standard library and costmodel/ only"
           ${_mpi} ${_hdf5} ${_yaml} ${_boost} ${_dse} "\"search/")
_dse_arrow(search RECURSE "the search is pure: the standard library, search/ and costmodel/ only"
           ${_mpi} ${_hdf5} ${_yaml} ${_boost} ${_dse})
_dse_arrow(dse FLAT "dse/'s own files (error, plan, version, parallel) sit below every dse/ folder"
           ${_mpi} ${_hdf5} ${_yaml} ${_boost} ${_upper})
_dse_arrow(dse/io RECURSE "dse/io reads and writes files: no MPI, no HDF5, no Boost, nothing above it"
           ${_mpi} ${_hdf5} ${_boost} "\"dse/(h5|driver|validate|cli)/")
_dse_arrow(dse/h5 RECURSE "dse/h5 is the HDF5 layer: below the driver, the validation suite and the command line"
           ${_yaml} ${_boost} "\"dse/(driver|validate|cli)/")
_dse_arrow(dse/driver RECURSE "dse/driver may use dse/io and dse/h5, never the command line or the validation suite"
           ${_boost} "\"dse/(validate|cli)/")
_dse_arrow(dse/validate RECURSE "dse/validate evaluates models on files: no MPI, no HDF5, no driver, no command line"
           ${_mpi} ${_hdf5} ${_boost} "\"dse/(h5|driver|cli)/")
