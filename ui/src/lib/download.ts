// Saving a file the page made (an export, a tlog-proof): a Blob behind a
// temporary object URL and an <a download> click. Nothing leaves the page.

export function download(name: string, content: string | Uint8Array, type = 'application/octet-stream') {
  const blob = new Blob([content as BlobPart], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked after the click has been handled (the download holds its own copy).
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
