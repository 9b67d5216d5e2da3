// The source of the precompiled-header targets (cmake/pch.cmake): the header is the work.
