;;; summary.el --- "Buckley: explain this" where eglot opens no documents (eglot 1.9, Emacs 28) -*- lexical-binding: t -*-
;; The one-line summary reaches the echo area (eglot shows window/showMessage with `message'); the
;; answer is on hover over the asked lines.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(buckley-finish
 (lambda ()
   (let* ((server (buckley-start))
          (lines (buckley-select-backoff)))
     (buckley-note "server" (plist-get (eglot--server-info server) :name))
     (buckley-note "actions" (mapcar (lambda (action) (plist-get action :title))
                                     (buckley-run-code-action server (car lines) (cdr lines) "Buckley: explain this")))
     (buckley-note "message"
                   (buckley-wait "the answer's one-line message"
                                 (lambda () (let ((messages (buckley-messages)))
                                              ;; As eglot puts it in the echo area (`message' logs it here too).
                                              (when (string-match "^\\[eglot\\] Server reports (type=3): answered «[^\n]*" messages)
                                                (match-string 0 messages))))))
     (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
       (goto-char (point-min))
       (search-forward "return 2 ** attempt")
       (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
         (buckley-note "hover" (plist-get (plist-get hover :contents) :value))))
     (eglot-shutdown server))))
