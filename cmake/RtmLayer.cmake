# rtm_layer(<target> FOLDER <folder>): makes <folder> (project-relative, e.g. kernels/cpu) the one
# folder <target> publishes to its users, so a layer sees only its own folder and the folders of
# the layers it links (docs/design.md, "How the build enforces the layers").
#
# Includes are written from the project root ("kernels/cpu/cpu_propagator.h"), but the project
# root itself is no include directory: that would admit every folder. Instead each target gets its
# own include root in the build tree, ${PROJECT_BINARY_DIR}/include_roots/<target>/, holding one
# symbolic link at the folder's project-relative path (include_roots/rtm_cpu/kernels/cpu ->
# <source>/kernels/cpu). That root is the target's PUBLIC (INTERFACE for a header-only target)
# include directory, so CMake passes it on exactly along the link graph: an include of a folder
# whose target is not linked (directly, or through PUBLIC links) finds no file and fails to build.
function(rtm_layer target)
  cmake_parse_arguments(L "" "FOLDER" "" ${ARGN})
  if(NOT L_FOLDER OR NOT IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${L_FOLDER})
    message(FATAL_ERROR "rtm_layer(${target}): FOLDER '${L_FOLDER}' is no folder of the project")
  endif()
  set(root ${PROJECT_BINARY_DIR}/include_roots/${target})
  set(link ${root}/${L_FOLDER})
  get_filename_component(parent ${link} DIRECTORY)
  # The root holds this one link; made anew, so that a link left by an earlier FOLDER above this
  # one (kernels/cuda before kernels/cuda/util) cannot stand in its path. REMOVE_RECURSE removes
  # links themselves, never what they point to.
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${L_FOLDER} ${link} SYMBOLIC)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    target_include_directories(${target} INTERFACE ${root})
  else()
    target_include_directories(${target} PUBLIC ${root})
  endif()
endfunction()
