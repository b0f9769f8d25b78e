;;; task.el --- a task whose tool call waits for approval, approved from eglot -*- lexical-binding: t -*-
;; eglot 1.17 cannot be asked with window/showMessageRequest from a test (it prompts), and does not
;; advertise it: the approval arrives as a diagnostic (flymake) with code actions, as for Helix.
(load (expand-file-name "common.el" (file-name-directory load-file-name)) nil t)

(defun buckley-flymake-diagnostics ()
  (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
    (mapcar #'flymake-diagnostic-text (flymake-diagnostics))))

(buckley-finish
 (lambda ()
   (let* ((server (buckley-start))
          (lines (buckley-select-backoff)))
     (buckley-run-code-action server (car lines) (cdr lines) "Buckley: fix problems here")
     ;; The agent wants to edit config.json: a warning diagnostic says so...
     (buckley-note "diagnostic"
                   (buckley-wait "the approval diagnostic"
                                 (lambda () (seq-find (lambda (text) (string-match-p "Edit config\\.json" text))
                                                      (buckley-flymake-diagnostics)))))
     ;; ...and the code actions there decide.
     (with-current-buffer (find-buffer-visiting (getenv "BUCKLEY_FILE"))
       (let ((lines (buckley-select-backoff)))
         (buckley-note "approvalActions"
                       (seq-filter (lambda (title) (string-match-p "approve\\|deny" title))
                                   (mapcar (lambda (action) (plist-get action :title))
                                           (buckley-run-code-action server (car lines) (cdr lines) "Buckley: approve «Edit config.json»"))))))
     ;; The task goes on and ends: its answer document opens, the diagnostic is gone.
     (let ((document (buckley-wait "the task's answer document" #'buckley-answer-document)))
       (buckley-note "documentText" (with-current-buffer document (buffer-string))))
     (buckley-wait "the approval diagnostic to go" (lambda () (null (buckley-flymake-diagnostics))))
     (buckley-note "diagnosticsAfter" (length (buckley-flymake-diagnostics)))
     (eglot-shutdown server))))
