;;; explain.el --- "Buckley: explain this" in a real Emacs 30 with its built-in eglot -*- lexical-binding: t -*-
;; Run by test/emacs/emacs.test.ts: emacs --batch -l explain.el. The server command, the fixture
;; and where to write the result come from the environment. Every step waits on what Emacs shows
;; (a buffer, a message, a hover) with a deadline, and the result is written as JSON.
(require 'eglot)
(require 'json)

(defvar buckley-result (make-hash-table :test 'equal))
(defun buckley-note (key value) (puthash key value buckley-result))
(defun buckley-write-result ()
  (with-temp-file (getenv "BUCKLEY_RESULT") (insert (json-encode buckley-result))))

(defun buckley-wait (what predicate &optional seconds)
  "Run the event loop until PREDICATE returns non-nil, or fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 30))) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless value (error "Timed out waiting for %s" what))
    value))

(defun buckley-messages ()
  (with-current-buffer (messages-buffer) (buffer-string)))

(condition-case err
    (progn
      (setq eglot-sync-connect t eglot-autoshutdown t)
      (add-to-list 'eglot-server-programs
                   `(js-mode . ,(list (getenv "BUCKLEY_NODE") (getenv "BUCKLEY_BIN") "--stdio")))
      (find-file (getenv "BUCKLEY_FILE"))
      (js-mode)
      (apply #'eglot (eglot--guess-contact))
      (let ((server (buckley-wait "eglot to connect" #'eglot-current-server)))
        (buckley-note "server" (plist-get (eglot--server-info server) :name))
        ;; Select the two lines of `backoff', as a user would, and list the code actions there.
        (goto-char (point-min))
        (search-forward "export function backoff")
        (let* ((beg (line-beginning-position))
               (end (progn (forward-line 1) (line-end-position)))
               (actions (jsonrpc-request server :textDocument/codeAction
                                         (list :textDocument (eglot--TextDocumentIdentifier)
                                               :range (list :start (eglot--pos-to-lsp-position beg)
                                                            :end (eglot--pos-to-lsp-position end))
                                               :context (list :diagnostics [])))))
          (buckley-note "actions" (mapcar (lambda (action) (plist-get action :title)) actions))
          (let ((explain (seq-find (lambda (action) (equal (plist-get action :title) "Buckley: explain this")) actions)))
            (unless explain (error "No \"Buckley: explain this\" among %S" actions))
            ;; What M-x eglot-code-actions does with the chosen action.
            (eglot-execute server explain)))
        ;; The answer: a one-line message, the markdown document opened by window/showDocument,
        ;; and hover over the asked lines.
        (buckley-note "message"
                      (buckley-wait "the answer's one-line message"
                                    (lambda () (let ((messages (buckley-messages)))
                                                 (when (string-match "Buckley: You asked[^\n]*" messages)
                                                   (match-string 0 messages))))))
        (let ((document (buckley-wait "the answer document"
                                      (lambda () (seq-find (lambda (buffer)
                                                             (string-match-p "buckley-lsp/answers/.*\\.md\\'" (or (buffer-file-name buffer) "")))
                                                           (buffer-list))))))
          (buckley-note "document" (buffer-file-name document))
          (buckley-note "documentText" (with-current-buffer document (buffer-string))))
        (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
          (goto-char (point-min))
          (search-forward "return 2 ** attempt")
          (let ((hover (jsonrpc-request server :textDocument/hover (eglot--TextDocumentPositionParams))))
            (buckley-note "hover" (plist-get (plist-get hover :contents) :value))))
        (buckley-note "modified" (buffer-modified-p (find-buffer-visiting (getenv "BUCKLEY_FILE"))))
        (eglot-shutdown server)))
  (error (buckley-note "error" (error-message-string err))))
(buckley-note "messages" (buckley-messages))
(buckley-write-result)
(kill-emacs 0)
