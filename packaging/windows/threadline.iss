; Inno Setup 6 script: a per-user Threadline installer (no administrator rights needed).
;
; Built by `python packaging/build.py windows`, which passes the defines below; by hand:
;   iscc /DAppVersion=0.1.0 /DSourceDir=build\dist\threadline /DOutputDir=build\out ^
;        /DIconFile=build\icons\threadline.ico packaging\windows\threadline.iss
;
; Installs the PyInstaller one-folder build into %LOCALAPPDATA%\Programs\Threadline, adds a
; Start menu entry (and optionally a desktop icon), registers an uninstaller in
; "Apps & features". Conversations live in %LOCALAPPDATA%\Threadline and are kept on
; uninstall (they are the user's data).

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef SourceDir
  #define SourceDir "..\..\build\dist\threadline"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\build\out"
#endif
#ifndef IconFile
  #define IconFile "..\..\build\icons\threadline.ico"
#endif
#define AppName "Threadline"
#define AppExe "threadline.exe"

[Setup]
; A stable AppId: upgrades replace the previous version instead of installing beside it.
AppId={{6F0C2B7E-4B1D-4C59-9E3A-2D7A1C0B5E42}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Threadline developers
AppPublisherURL=https://github.com/threadline/threadline
AppSupportURL=https://github.com/threadline/threadline/issues
AppCopyright=Copyright (c) Threadline developers. MIT License.
VersionInfoVersion={#AppVersion}
; Per-user install without elevation: {autopf} is %LOCALAPPDATA%\Programs, {autoprograms}
; the user's Start menu.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=commandline dialog
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0.17763
OutputDir={#OutputDir}
OutputBaseFilename=threadline-{#AppVersion}-windows-setup
SetupIconFile={#IconFile}
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/ultra64
SolidCompression=yes
LZMANumBlockThreads=4
WizardStyle=modern
CloseApplications=yes
RestartApplications=no
ChangesEnvironment=no
; The threadline:// scheme and the file types below (docs/desktop.md, "Files and links").
ChangesAssociations=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "startatlogin"; Description: "Start Threadline when I sign in"; GroupDescription: "Other:"; Flags: unchecked

[InstallDelete]
; An upgrade must not keep modules of the previous build next to the new ones.
Type: filesandordirs; Name: "{app}\_internal"

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Comment: "Chat with language models"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Tasks: desktopicon

[Registry]
; HKA: the current user's classes for a per-user install, the machine's for an all-users one.
; threadline:// links: a second start hands the link to the running window, which asks first.
Root: HKA; Subkey: "Software\Classes\threadline"; ValueType: string; ValueName: ""; ValueData: "URL:Threadline link"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\threadline"; ValueType: string; ValueName: "URL Protocol"; ValueData: ""
Root: HKA; Subkey: "Software\Classes\threadline\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#AppExe},0"
Root: HKA; Subkey: "Software\Classes\threadline\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
; MCP bundles open in Threadline's install dialog; chat exports (.json, .zip) get "Open with Threadline".
Root: HKA; Subkey: "Software\Classes\Threadline.McpBundle"; ValueType: string; ValueName: ""; ValueData: "MCP bundle"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Threadline.McpBundle\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#AppExe},0"
Root: HKA; Subkey: "Software\Classes\Threadline.McpBundle\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
Root: HKA; Subkey: "Software\Classes\.mcpb"; ValueType: string; ValueName: ""; ValueData: "Threadline.McpBundle"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.dxt"; ValueType: string; ValueName: ""; ValueData: "Threadline.McpBundle"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\Threadline.Export"; ValueType: string; ValueName: ""; ValueData: "Chat export"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Threadline.Export\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""
Root: HKA; Subkey: "Software\Classes\.json\OpenWithProgids"; ValueType: string; ValueName: "Threadline.Export"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.zip\OpenWithProgids"; ValueType: string; ValueName: "Threadline.Export"; ValueData: ""; Flags: uninsdeletevalue
; Start at login (the task above); Settings → Desktop says the installer does this on Windows.
Root: HKCU; Subkey: "Software\Microsoft\Windows\CurrentVersion\Run"; ValueType: string; ValueName: "Threadline"; ValueData: """{app}\{#AppExe}"""; Tasks: startatlogin; Flags: uninsdeletevalue

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only what the installer put there; the user's conversations in %LOCALAPPDATA%\Threadline stay.
Type: filesandordirs; Name: "{app}\_internal"
