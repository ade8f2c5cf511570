#pragma once
// The CLI's answer to a mapped file cut short under it. splice maps the model, engine files
// and inputs; when another process truncates one of them while splice reads it, the kernel
// delivers SIGBUS on the next read of a page past the new end, which killed the CLI with
// "Bus error" (exit 135). After install_mapped_file_guard() it prints "model file changed while
// in use" and exits 2 instead. On x86-64 a SIGBUS has no other cause in splice (it makes no
// misaligned atomic or device accesses that raise it).

namespace splice::tools {

// Installs the SIGBUS handler for the rest of the process (the CLI calls it first thing).
void install_mapped_file_guard();

}  // namespace splice::tools
