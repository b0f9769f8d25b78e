;;; explain.el --- "Buckley: explain this" in Emacs 30 with its built-in eglot -*- lexical-binding: t -*-
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   (let ((server (buckley-start)))
     (buckley-note "command" (process-command (jsonrpc--process server)))
     (buckley-explain server)
     ;; The answer: a one-line message, the markdown document opened by window/showDocument,
     ;; and hover over the asked lines.
     (buckley-note-message "answered «[^\n]*")
     (let ((document (buckley-wait "the answer document" #'buckley-answer-document)))
       (buckley-note "document" (buffer-file-name document))
       (buckley-note "documentText" (with-current-buffer document (buffer-string))))
     (buckley-note-hover server)
     (buckley-note "modified" (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE")) (buffer-modified-p)))
     (eglot-shutdown server))))
