;;; summary.el --- "Buckley: explain this" where eglot opens no documents (eglot 1.9, Emacs 28) -*- lexical-binding: t -*-
;; The one-line summary reaches the echo area (eglot shows window/showMessage with `message'); the
;; answer is on hover over the asked lines.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   (let ((server (buckley-start)))
     (buckley-explain server)
     ;; As eglot puts it in the echo area (`message' logs it in *Messages* too).
     (buckley-note-message "^\\[eglot\\] Server reports (type=3): answered «[^\n]*")
     (buckley-note-hover server)
     (eglot-shutdown server))))
