;;; explain.el --- "Buckley: explain this" in Emacs 30 with its built-in eglot -*- lexical-binding: t -*-
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   (let* ((server (buckley-start))
          (lines (buckley-select-backoff)))
     (buckley-note "server" (plist-get (eglot--server-info server) :name))
     (buckley-note "command" (process-command (jsonrpc--process server)))
     (buckley-note "actions" (mapcar (lambda (action) (plist-get action :title))
                                     (buckley-run-code-action server (car lines) (cdr lines) "Buckley: explain this")))
     ;; The answer: a one-line message, the markdown document opened by window/showDocument,
     ;; and hover over the asked lines.
     (buckley-note "message"
                   (buckley-wait "the answer's one-line message"
                                 (lambda () (let ((messages (buckley-messages)))
                                              (when (string-match "answered «[^\n]*" messages)
                                                (match-string 0 messages))))))
     (let ((document (buckley-wait "the answer document" #'buckley-answer-document)))
       (buckley-note "document" (buffer-file-name document))
       (buckley-note "documentText" (with-current-buffer document (buffer-string))))
     (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
       (goto-char (point-min))
       (search-forward "return 2 ** attempt")
       (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
         (buckley-note "hover" (plist-get (plist-get hover :contents) :value)))
       (buckley-note "modified" (buffer-modified-p)))
     (eglot-shutdown server))))
